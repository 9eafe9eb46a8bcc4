package xml

import (
	"bytes"
	"encoding/xml"
	"fmt"
)

// shaper stands between the lexer and the decoder of a struct. It knows
// which field each element decodes into, and so reads a list in either
// form the family writes: repeated (<lines>a</lines><lines>b</lines>, the
// Go peer's, Ruby's and Python's) or wrapped (<lines><lines>a</lines>
// <lines>b</lines></lines>, Java's, Jackson's default), whether the field
// is tagged lines or lines>lines. encoding/xml alone reads one form per
// tag and drops the other without a word; so an element whose content its
// field would lose is refused instead (ErrShape), which parks the message.
type shaper struct {
	src   xml.TokenReader
	root  *shape
	ahead []xml.Token // read from src, not looked at yet
	err   error       // src's error met looking ahead, after ahead
	out   []xml.Token // for the decoder, from outAt on
	outAt int
	stack []frame
	token xml.Token // the token taken, as it came: passed on without boxing it again
}

// frame is an element open in the stream.
type frame struct {
	name  xml.Name
	shape *shape // nil: not checked
	// items: the element holds a list's items (a wrapper, or the element
	// of a field tagged a>b whose b is a list), passed on renamed to rename
	// and all named alike (as the first, itemName).
	items    *shape
	rename   xml.Name
	itemName string
	hidden   bool        // a Java wrapper the decoder does not see
	end      []xml.Token // what the element's end is passed on as; nil: itself
}

// newShaper reads src into a value of shape root (into a slice, one item:
// the root is no wrapper).
func newShaper(src xml.TokenReader, root *shape) *shaper {
	return &shaper{src: src, root: root.item(), out: make([]xml.Token, 0, 2), stack: make([]frame, 0, 8)}
}

func (s *shaper) Token() (xml.Token, error) {
	for s.outAt == len(s.out) {
		s.out, s.outAt = s.out[:0], 0 // its array reused
		t, err := s.next()
		if err != nil {
			return nil, err
		}
		if err := s.take(t); err != nil {
			return nil, err
		}
	}
	t := s.out[s.outAt]
	s.outAt++
	return t, nil
}

func (s *shaper) next() (xml.Token, error) {
	if len(s.ahead) > 0 {
		t := s.ahead[0]
		s.ahead = s.ahead[1:]
		return t, nil
	}
	if s.err != nil {
		return nil, s.err
	}
	// Not copied: the decoder takes this token before src is read again,
	// unless peek reads on, and peek copies what it keeps.
	return s.src.Token()
}

// peek is the next token that is neither white space nor a comment, read
// into ahead; nil when src fails (the error comes after ahead).
func (s *shaper) peek() xml.Token {
	for i := 0; ; i++ {
		if i == len(s.ahead) {
			if s.err != nil {
				return nil
			}
			t, err := s.src.Token()
			if err != nil {
				s.err = err
				return nil
			}
			s.ahead = append(s.ahead, xml.CopyToken(t))
		}
		switch t := s.ahead[i].(type) {
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return t
			}
		case xml.Comment, xml.ProcInst:
		default:
			return t
		}
	}
}

func (s *shaper) take(token xml.Token) error {
	s.token = token
	switch t := token.(type) {
	case xml.StartElement:
		return s.start(t)
	case xml.EndElement:
		s.finish(t)
	case xml.CharData:
		return s.text(t)
	default:
		s.pass()
	}
	return nil
}

// pass passes on the token taken as it is.
func (s *shaper) pass() { s.out = append(s.out, s.token) }

func (s *shaper) start(t xml.StartElement) error {
	if len(s.stack) == 0 {
		return s.open(t, s.root)
	}
	top := &s.stack[len(s.stack)-1]
	switch {
	case top.items != nil:
		if top.itemName == "" {
			top.itemName = t.Name.Local
		} else if t.Name.Local != top.itemName {
			return fmt.Errorf("%w: the list <%s> holds items named %s and %s", ErrShape, top.name.Local, top.itemName, t.Name.Local)
		}
		renamed := xml.Name{Space: t.Name.Space, Local: top.rename.Local}
		s.out = append(s.out, xml.StartElement{Name: renamed, Attr: t.Attr})
		s.push(frame{name: t.Name, shape: top.items, end: []xml.Token{xml.EndElement{Name: renamed}}})
		return nil
	case top.shape == nil:
		return s.open(t, nil)
	case top.shape.kind == text:
		return fmt.Errorf("%w: <%s> holds the element <%s>, but it decodes into text", ErrShape, top.name.Local, t.Name.Local)
	}
	return s.open(t, top.shape.child(t.Name.Local))
}

// open passes on the start of an element of shape sh, or, for a Java
// wrapper, does not.
func (s *shaper) open(t xml.StartElement, sh *shape) error {
	if sh == nil || sh.kind == unchecked {
		s.pass()
		s.push(frame{name: t.Name})
		return nil
	}
	if sh.list && s.wrapper(t, sh) {
		s.push(frame{name: t.Name, items: sh.item(), rename: t.Name, hidden: true})
		return nil
	}
	if name, list := sh.onlyList(); list != nil {
		if s.inPlace(list, name) {
			// The repeated form, <lines>a</lines>, into lines>lines: an
			// element of one item.
			leaf := xml.Name{Space: t.Name.Space, Local: name}
			s.out = append(s.out, s.token, xml.StartElement{Name: leaf})
			s.push(frame{name: t.Name, shape: list.item(), end: []xml.Token{xml.EndElement{Name: leaf}, t.End()}})
			return nil
		}
		s.pass()
		s.push(frame{name: t.Name, shape: sh, items: list.item(), rename: xml.Name{Local: name}})
		return nil
	}
	s.pass()
	s.push(frame{name: t.Name, shape: sh})
	return nil
}

// wrapper reports whether t, the element of a list field of shape sh, is
// Java's wrapper: no attributes, and an element first, which text cannot
// hold, or, for a list of structs, an element of the wrapper's own name
// that the struct does not declare.
func (s *shaper) wrapper(t xml.StartElement, sh *shape) bool {
	if len(t.Attr) > 0 {
		return false
	}
	first, ok := s.peek().(xml.StartElement)
	switch {
	case !ok:
		return false
	case sh.kind == text:
		return true
	}
	return first.Name.Local == t.Name.Local && sh.child(first.Name.Local) == nil
}

// inPlace reports whether the element of a field tagged a>b, b a list of
// shape list, is an item itself (the repeated form): it holds text first,
// for a list of text, or an element the struct declares and not named b,
// for a list of structs.
func (s *shaper) inPlace(list *shape, name string) bool {
	switch first := s.peek().(type) {
	case xml.CharData:
		return list.kind == text
	case xml.StartElement:
		return list.kind == record && first.Name.Local != name && list.child(first.Name.Local) != nil
	}
	return false
}

// onlyList is the one child of a path (the a of a field tagged a>b) when
// that child is a list: the a is then the list's wrapper.
func (sh *shape) onlyList() (string, *shape) {
	if sh.kind != path || len(sh.next) != 1 {
		return "", nil
	}
	for name, c := range sh.next {
		if c.list && c.kind != unchecked {
			return name, c
		}
	}
	return "", nil
}

func (s *shaper) push(f frame) { s.stack = append(s.stack, f) }

func (s *shaper) finish(t xml.EndElement) {
	if len(s.stack) == 0 { // the decoder finds the mismatch
		s.pass()
		return
	}
	f := s.stack[len(s.stack)-1]
	s.stack = s.stack[:len(s.stack)-1]
	switch {
	case f.hidden:
	case f.end != nil:
		s.out = append(s.out, f.end...)
	default:
		s.pass()
	}
}

// text passes on character data, unless the element's field would lose
// it: a list's wrapper or a path's element holds elements only.
func (s *shaper) text(t xml.CharData) error {
	if len(s.stack) > 0 {
		top := s.stack[len(s.stack)-1]
		if (top.items != nil || top.shape != nil && top.shape.kind == path) && len(bytes.TrimSpace(t)) > 0 {
			return fmt.Errorf("%w: <%s> holds text %q beside elements", ErrShape, top.name.Local, bytes.TrimSpace(t))
		}
		if top.hidden {
			return nil
		}
	}
	s.pass()
	return nil
}

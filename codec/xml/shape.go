package xml

import (
	"encoding"
	"encoding/xml"
	"reflect"
	"strings"
	"sync"
)

// kind is how an element decodes into a Go value, as far as its shape
// matters.
type kind int

const (
	// unchecked: anything goes (an interface, a map, an xml.Unmarshaler,
	// an element no field takes).
	unchecked kind = iota
	// text: a string, number, bool, []byte or encoding.TextUnmarshaler;
	// encoding/xml would drop child elements without a word.
	text
	// record: a struct, its child elements by its fields.
	record
	// path: the element between a field tagged a>b and its own element,
	// its child elements by the rest of the path.
	path
)

// shape is what an element decodes into.
type shape struct {
	kind kind
	// list: a slice field, whose element repeats (the Go peer's, Ruby's
	// and Python's form) or comes in a wrapper (Java's).
	list bool
	typ  reflect.Type      // record: the struct
	next map[string]*shape // path: the child elements
}

// child is the shape of s's child element named name; nil when nothing
// takes it.
func (s *shape) child(name string) *shape {
	switch s.kind {
	case record:
		return fields(s.typ)[name]
	case path:
		return s.next[name]
	}
	return nil
}

// item is the shape of one item of s, a list.
func (s *shape) item() *shape {
	i := *s
	i.list = false
	return &i
}

var (
	unmarshalerType     = reflect.TypeFor[xml.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// shapeOf is the shape of an element decoded into a value of type t.
func shapeOf(t reflect.Type) *shape {
	t = deref(t)
	implements := func(i reflect.Type) bool { return t.Implements(i) || reflect.PointerTo(t).Implements(i) }
	switch {
	case implements(unmarshalerType):
		return &shape{kind: unchecked}
	case implements(textUnmarshalerType):
		return &shape{kind: text}
	}
	switch t.Kind() {
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return &shape{kind: text}
		}
		s := shapeOf(t.Elem())
		s.list = true
		return s
	case reflect.Struct:
		return &shape{kind: record, typ: t}
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return &shape{kind: text}
	}
	return &shape{kind: unchecked}
}

// fieldShapes caches fields by struct type.
var fieldShapes sync.Map // reflect.Type → map[string]*shape

// fields is the child elements of a struct by local name, as encoding/xml
// maps them: a field's tag name (its last part after a namespace) or its
// name, a path a>b as an element a holding b, an embedded struct's
// fields as the struct's own; attributes, character data, inner XML,
// comments and ",any" are no child elements of their own.
func fields(t reflect.Type) map[string]*shape {
	if m, ok := fieldShapes.Load(t); ok {
		return m.(map[string]*shape)
	}
	m := map[string]*shape{}
	addFields(m, t, map[reflect.Type]bool{})
	fieldShapes.Store(t, m)
	return m
}

func addFields(m map[string]*shape, t reflect.Type, seen map[reflect.Type]bool) {
	if seen[t] {
		return
	}
	seen[t] = true
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("xml")
		if tag == "-" || f.Name == "XMLName" {
			continue
		}
		name, flags, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && flags == "" {
			if ft := deref(f.Type); ft.Kind() == reflect.Struct {
				addFields(m, ft, seen)
				continue
			}
		}
		if !f.IsExported() || !elementFlags(flags) {
			continue
		}
		if _, local, ok := strings.Cut(name, " "); ok {
			name = local // after its namespace
		}
		if name == "" {
			name = f.Name
		}
		parts := strings.Split(name, ">")
		level := m
		for _, p := range parts[:len(parts)-1] {
			s, ok := level[p]
			if !ok {
				s = &shape{kind: path, next: map[string]*shape{}}
				level[p] = s
			}
			if s.kind != path {
				return // a conflict, which encoding/xml refuses itself
			}
			level = s.next
		}
		if last := parts[len(parts)-1]; level[last] == nil {
			level[last] = shapeOf(f.Type)
		}
	}
}

// elementFlags reports whether a field with these tag flags is a child
// element.
func elementFlags(flags string) bool {
	for flag := range strings.SplitSeq(flags, ",") {
		if flag != "" && flag != "omitempty" {
			return false
		}
	}
	return true
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

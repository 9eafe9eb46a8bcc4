// Package xml is the AceMQ codec for XML bodies (section 8 of the family's
// contract), with the standard library's encoding/xml. It is a package of
// its own, as every format is, so that a service imports only the formats
// it uses.
//
// It writes application/xml and reads application/xml, text/xml and any
// */*+xml, ignoring parameters and case; like every AceMQ library's XML
// codec, it does not claim a message without a content type.
//
//	c, err := acemq.Consume(ctx, conn, "orders", handle, acemq.WithCodec(xml.Codec))
//
// The root element. A struct is written as encoding/xml writes it, under its
// XML name: its XMLName field, or else its type's name (OrderPlaced), which
// is what the Java reference (the class's simple name) and the Go peer write,
// byte for byte. A map with string keys is written under
// contract.XMLMapRoot ("message"), as the Ruby and Python libraries write
// theirs: an element per key in the keys' order, a slice as the element
// repeated. Reading accepts any root element's name, unless the struct read
// into has an XMLName that names one, so that a body from any AceMQ library
// decodes.
//
// Reading into a *map[string]any (or a *any) gives the root's children and
// attributes by their local names: an element holding only text is its
// text (XML has no numbers: "4250"), one with children or attributes a
// map[string]any, an element repeated a []any (and one that happens to
// appear once is not a slice), text beside children the key "".
//
// Lists. The Go peer, Ruby and Python repeat a list's element in place
// (<lines>a</lines><lines>b</lines>); Java (Jackson's default) wraps the
// list in an element of its name (<lines><lines>a</lines><lines>b</lines>
// </lines>). A slice field reads both forms whichever its tag: tagged
// "lines" or "lines>lines" (encoding/xml's wrapper syntax), a wrapper's
// items may have any one name. The tag decides what Marshal writes:
// "lines" the repeated form, "lines>lines" Java's. A wrapper is an element
// without attributes that holds elements first: for a list of text always
// (text holds no elements), for a list of structs when its first child
// has the wrapper's name and the struct has no such field. Into a map, an
// element holding only elements of its own name, nothing else, is their
// value (a list, or the one item); a map writes a list in a list wrapped.
// An element that the value decoded into would lose some of is an error
// (ErrShape), never an empty or missing field: elements where a field takes
// text, text beside a wrapper's items, items of two names.
//
// Refused: a DTD (<!DOCTYPE ...> or any <!...> declaration: ErrDTD), an
// entity reference other than XML's five and numeric ones (encoding/xml
// resolves no other, and nothing could define one), a declared encoding
// other than UTF-8, a name that is not an XML name (ErrName: encoding/xml
// reads <1st>), text or another element after the root (ErrTrailing) and
// text before it.
package xml

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/mediatype"
)

// Codec encodes and decodes XML as application/xml.
var Codec acemq.Codec = codec{}

var (
	// ErrDTD is a body with a document type declaration or another
	// <!...> declaration: the family refuses DTDs and external entities.
	ErrDTD = errors.New("a DTD (<!DOCTYPE ...> or another <!...> declaration) is refused")
	// ErrNoRoot is a body without a root element.
	ErrNoRoot = errors.New("the body holds no root element")
	// ErrTrailing is a body with text or an element outside its root
	// element.
	ErrTrailing = errors.New("the body holds more than its root element")
	// ErrName is an element or attribute name that is not an XML name
	// (<1st>, <:a>), which encoding/xml would read.
	ErrName = errors.New("not an XML name")
	// ErrShape is an element the value decoded into cannot hold without
	// losing some of it: elements where a field takes text, a list's
	// wrapper holding text or items of two names.
	ErrShape = errors.New("the element's shape does not fit the value it decodes into")
	// ErrTooDeep is a body nested deeper than a map is read.
	ErrTooDeep = errors.New("the body's elements are nested too deep")
)

// maxDepth is how deep a map is read, as encoding/xml limits its structs.
const maxDepth = 10000

// reads are the content types read besides any */*+xml.
var reads = []string{contract.ContentTypeXML, contract.ContentTypeTextXML}

type codec struct{}

func (codec) ContentType() string { return contract.ContentTypeXML }

func (codec) Reads(contentType string) bool {
	return mediatype.Matches(contentType, reads, contract.ContentTypeXMLSuffix)
}

// Readable says what Reads accepts, for a consumer's refusal.
func (codec) Readable() string {
	return mediatype.Readable(reads, contract.ContentTypeXMLSuffix)
}

func (codec) Marshal(v any) ([]byte, error) {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Map {
		b, err := xml.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("acemq: XML codec: %w", err)
		}
		return b, nil
	}
	var b bytes.Buffer
	enc := xml.NewEncoder(&b)
	if err := writeValue(enc, contract.XMLMapRoot, rv); err != nil {
		return nil, fmt.Errorf("acemq: XML codec: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("acemq: XML codec: %w", err)
	}
	return b.Bytes(), nil
}

// writeValue writes v as the element name: a map as an element per key, a
// slice (not []byte) as the element repeated, anything else as encoding/xml
// writes it.
func writeValue(enc *xml.Encoder, name string, v reflect.Value) error {
	for v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return enc.EncodeElement("", xml.StartElement{Name: xml.Name{Local: name}})
		}
		v = v.Elem()
	}
	switch {
	case v.Kind() == reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return fmt.Errorf("cannot write a map with %s keys as XML", v.Type().Key())
		}
		start := xml.StartElement{Name: xml.Name{Local: name}}
		if err := enc.EncodeToken(start); err != nil {
			return err
		}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		for _, k := range keys {
			key := k.String()
			if key == "" {
				// Text beside the children, as a map read holds it.
				text, ok := textOf(v.MapIndex(k))
				if !ok {
					return fmt.Errorf("the key \"\" holds %s, not the element's text", v.MapIndex(k).Type())
				}
				if err := enc.EncodeToken(xml.CharData(text)); err != nil {
					return err
				}
				continue
			}
			if !isName(key) {
				return fmt.Errorf("the key %q is not an XML element name", key)
			}
			if err := writeValue(enc, key, v.MapIndex(k)); err != nil {
				return err
			}
		}
		return enc.EncodeToken(start.End())
	case isList(v):
		for i := range v.Len() {
			item := v.Index(i)
			if !isList(item) {
				if err := writeValue(enc, name, item); err != nil {
					return err
				}
				continue
			}
			// A list in a list cannot repeat in place: it is wrapped, as
			// Java writes a list, and read back so.
			start := xml.StartElement{Name: xml.Name{Local: name}}
			if err := enc.EncodeToken(start); err != nil {
				return err
			}
			if err := writeValue(enc, name, item); err != nil {
				return err
			}
			if err := enc.EncodeToken(start.End()); err != nil {
				return err
			}
		}
		return nil
	}
	return enc.EncodeElement(v.Interface(), xml.StartElement{Name: xml.Name{Local: name}})
}

// isList reports whether v, through interfaces, is a slice or an array
// other than bytes: a list, written as its element repeated.
func isList(v reflect.Value) bool {
	for v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	return (v.Kind() == reflect.Slice || v.Kind() == reflect.Array) && v.Type().Elem().Kind() != reflect.Uint8
}

// textOf is v as text, when it is a string.
func textOf(v reflect.Value) (string, bool) {
	for v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.String {
		return "", false
	}
	return v.String(), true
}

// isName reports whether s is an XML name without a prefix (an NCName of
// XML 1.0, fifth edition): encoding/xml reads and writes names that are
// not, such as <1st>, which other libraries' parsers refuse.
func isName(s string) bool {
	for i, r := range s {
		if !nameStart(r) && (i == 0 || !nameChar(r)) {
			return false
		}
	}
	return s != ""
}

// nameStart is XML's NameStartChar but the colon.
func nameStart(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || r == '_' ||
		0xC0 <= r && r <= 0xD6 || 0xD8 <= r && r <= 0xF6 || 0xF8 <= r && r <= 0x2FF ||
		0x370 <= r && r <= 0x37D || 0x37F <= r && r <= 0x1FFF || 0x200C <= r && r <= 0x200D ||
		0x2070 <= r && r <= 0x218F || 0x2C00 <= r && r <= 0x2FEF || 0x3001 <= r && r <= 0xD7FF ||
		0xF900 <= r && r <= 0xFDCF || 0xFDF0 <= r && r <= 0xFFFD || 0x10000 <= r && r <= 0xEFFFF
}

// nameChar is the rest of XML's NameChar.
func nameChar(r rune) bool {
	return r == '-' || r == '.' || '0' <= r && r <= '9' || r == 0xB7 ||
		0x300 <= r && r <= 0x36F || 0x203F <= r && r <= 0x2040
}

// checkName refuses a name that is not XML's: a prefix and a local part,
// each an NCName.
func checkName(n xml.Name) error {
	if !isName(n.Local) || n.Space != "" && !isName(n.Space) {
		raw := n.Local
		if n.Space != "" {
			raw = n.Space + ":" + n.Local
		}
		return fmt.Errorf("%w: %q", ErrName, raw)
	}
	return nil
}

// Unmarshal decodes data into v: a struct as encoding/xml does, whatever
// the root element's name (unless v's XMLName names one), or a
// *map[string]any or *any as the package's doc says.
func (codec) Unmarshal(_ string, data []byte, v any) error {
	if err := unmarshal(data, v); err != nil {
		return fmt.Errorf("acemq: XML codec: %w", err)
	}
	return nil
}

func unmarshal(data []byte, v any) error {
	var tokens xml.TokenReader = guard{xml.NewDecoder(bytes.NewReader(data))}
	switch v.(type) {
	case *map[string]any, *any:
	default:
		if t := reflect.TypeOf(v); t != nil {
			tokens = newShaper(tokens, shapeOf(t))
		}
	}
	dec := xml.NewTokenDecoder(tokens)
	root, err := rootElement(dec)
	if err != nil {
		return err
	}
	switch p := v.(type) {
	case *map[string]any:
		if p == nil {
			return errors.New("cannot decode into a nil *map[string]any")
		}
		m, err := readMap(dec, root)
		if err != nil {
			return err
		}
		*p = m
	case *any:
		if p == nil {
			return errors.New("cannot decode into a nil *any")
		}
		m, err := readMap(dec, root)
		if err != nil {
			return err
		}
		*p = m
	default:
		if err := dec.DecodeElement(v, &root); err != nil {
			return err
		}
	}
	return rest(dec)
}

// guard lexes with an inner decoder for an outer one that checks the
// elements' nesting and namespaces, and refuses a declaration (the outer
// one would skip it) and a name that is not XML's.
type guard struct{ d *xml.Decoder }

func (g guard) Token() (xml.Token, error) {
	t, err := g.d.RawToken()
	switch t := t.(type) {
	case xml.Directive:
		return nil, ErrDTD
	case xml.StartElement:
		if err := checkName(t.Name); err != nil {
			return nil, err
		}
		for _, a := range t.Attr {
			if err := checkName(a.Name); err != nil {
				return nil, err
			}
		}
	case xml.EndElement:
		if err := checkName(t.Name); err != nil {
			return nil, err
		}
	}
	return t, err
}

// rootElement reads up to the root's start, through the XML declaration,
// comments and white space (encoding/xml would skip text too).
func rootElement(dec *xml.Decoder) (xml.StartElement, error) {
	for {
		t, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return xml.StartElement{}, ErrNoRoot
		}
		if err != nil {
			return xml.StartElement{}, err
		}
		switch t := t.(type) {
		case xml.StartElement:
			return t, nil
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return xml.StartElement{}, fmt.Errorf("%w: text before the root element", ErrTrailing)
			}
		}
	}
}

// rest reads what follows the root, which may be comments, processing
// instructions and white space.
func rest(dec *xml.Decoder) error {
	for {
		t, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := t.(type) {
		case xml.StartElement:
			return fmt.Errorf("%w: the element <%s> after the root", ErrTrailing, t.Name.Local)
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return fmt.Errorf("%w: text after the root element", ErrTrailing)
			}
		}
	}
}

// readMap reads the root element, whose start has been read, as a map.
func readMap(dec *xml.Decoder, root xml.StartElement) (map[string]any, error) {
	v, err := readElement(dec, root, 1)
	if err != nil {
		return nil, err
	}
	switch v := v.(type) {
	case map[string]any:
		return v, nil
	case string:
		if strings.TrimSpace(v) == "" {
			return map[string]any{}, nil
		}
	}
	return nil, fmt.Errorf("the root element <%s> holds only text, not a map", root.Name.Local)
}

// readElement reads the element started by start up to its end: its text
// when it has neither children nor attributes, else a map of them.
func readElement(dec *xml.Decoder, start xml.StartElement, depth int) (any, error) {
	if depth > maxDepth {
		return nil, ErrTooDeep
	}
	var m map[string]any
	var repeated map[string]bool // names seen more than once, their values a []any
	add := func(name string, v any) {
		if m == nil {
			m, repeated = map[string]any{}, map[string]bool{}
		}
		prev, seen := m[name]
		switch {
		case !seen:
			m[name] = v
		case repeated[name]:
			m[name] = append(prev.([]any), v)
		default:
			m[name] = []any{prev, v}
			repeated[name] = true
		}
	}
	for _, a := range start.Attr {
		// Namespace declarations are not the message's.
		if a.Name.Space == "xmlns" || a.Name.Space == "" && a.Name.Local == "xmlns" {
			continue
		}
		add(a.Name.Local, a.Value)
	}
	var text strings.Builder
	for {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch t := t.(type) {
		case xml.StartElement:
			v, err := readElement(dec, t, depth+1)
			if err != nil {
				return nil, err
			}
			add(t.Name.Local, v)
		case xml.CharData:
			text.Write(t)
		case xml.EndElement:
			if m == nil {
				return text.String(), nil
			}
			if s := text.String(); strings.TrimSpace(s) != "" {
				add("", s)
			}
			// Java's wrapped list: an element holding only elements of its
			// own name is their value, as if they were repeated in its place.
			if v, only := m[start.Name.Local]; only && len(m) == 1 && len(start.Attr) == 0 && depth > 1 {
				return v, nil
			}
			return m, nil
		}
	}
}

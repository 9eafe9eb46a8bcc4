package xml_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"strings"
	"testing"

	acemqxml "github.com/acemq-go/acemq/codec/xml"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/testing/codectest"
)

// OrderPlaced is the fixtures' message; with no XMLName, its root is its
// type's name.
type OrderPlaced struct {
	OrderID    string   `xml:"orderId"`
	Customer   string   `xml:"customer"`
	TotalCents int64    `xml:"totalCents"`
	Currency   string   `xml:"currency"`
	Items      []string `xml:"items"`
}

var want = OrderPlaced{OrderID: "o-1", Customer: "Ana Söderström", TotalCents: 4250, Currency: "EUR", Items: []string{"widget", "gasket"}}

var codec = acemqxml.Codec

// The content types of section 8: parameters and case ignored, no claim on
// a message without one.
func TestContentTypes(t *testing.T) {
	if got := codec.ContentType(); got != contract.ContentTypeXML {
		t.Errorf("ContentType = %q", got)
	}
	for ct, reads := range map[string]bool{
		"application/xml": true, "text/xml": true, "application/atom+xml": true, "image/svg+xml": true,
		"Application/XML; charset=utf-8": true, "TEXT/XML": true,
		"": false, "application/json": false, "text/plain": false, "application/x-xml": false, "application/xml-dtd": false,
	} {
		if got := codec.Reads(ct); got != reads {
			t.Errorf("Reads(%q) = %v, want %v", ct, got, reads)
		}
	}
}

// Every XML sample decodes to its expected value, into a struct and into a
// map (where XML's values are text: "4250").
func TestFixtures(t *testing.T) {
	for _, s := range codectest.Load(t).Of(t, "xml") {
		t.Run(s.Producer, func(t *testing.T) {
			var o OrderPlaced
			if err := codec.Unmarshal(s.ContentType, s.Body, &o); err != nil || !codectest.Same(t, o, want) {
				t.Errorf("into a struct: %+v, %v", o, err)
			}
			var m map[string]any
			if err := codec.Unmarshal(s.ContentType, s.Body, &m); err != nil || !codectest.Same(t, m, s.Expected) {
				t.Errorf("into a map: %v, %v; want %s", m, err, s.Expected)
			}
			var a any
			if err := codec.Unmarshal(s.ContentType, s.Body, &a); err != nil || !codectest.Same(t, a, s.Expected) {
				t.Errorf("into an any: %v, %v; want %s", a, err, s.Expected)
			}
		})
	}
}

// Java and the Go peer write the same bytes, and so does Marshal.
func TestMarshalWritesJavasAndGosBytes(t *testing.T) {
	samples := codectest.Load(t).Of(t, "xml")
	got, err := codec.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	for _, producer := range []string{"java", "go"} {
		if s := codectest.By(t, samples, producer); !bytes.Equal(got, s.Body) {
			t.Errorf("Marshal wrote\n%s\n%s wrote\n%s", got, producer, s.Body)
		}
	}
}

// The root element read is any, as each AceMQ library writes its own: Ruby
// and Python's message, Java's class name. A struct that names its root
// with XMLName holds to it.
func TestRootElement(t *testing.T) {
	for _, body := range []string{
		`<message><orderId>o-1</orderId></message>`,
		`<OrderPlaced><orderId>o-1</orderId></OrderPlaced>`,
		`<?xml version="1.0" encoding="UTF-8"?>` + "\n<!-- a comment -->\n<order><orderId>o-1</orderId></order>\n",
	} {
		var o OrderPlaced
		if err := codec.Unmarshal(contract.ContentTypeXML, []byte(body), &o); err != nil || o.OrderID != "o-1" {
			t.Errorf("%s: %+v, %v", body, o, err)
		}
	}
	type named struct {
		XMLName xml.Name `xml:"order"`
		OrderID string   `xml:"orderId"`
	}
	var n named
	if err := codec.Unmarshal(contract.ContentTypeXML, []byte(`<message><orderId>o-1</orderId></message>`), &n); err == nil {
		t.Errorf("a <message> read into a struct named order: %+v", n)
	}
	b, err := codec.Marshal(named{OrderID: "o-1"})
	if err != nil || string(b) != `<order><orderId>o-1</orderId></order>` {
		t.Errorf("a named struct: %s, %v", b, err)
	}
}

// A map is written under <message>, as Ruby and Python write theirs, its
// keys in order, a slice as the element repeated; it reads back the same.
func TestMap(t *testing.T) {
	m := map[string]any{"orderId": "o-1", "items": []any{"widget", "gasket"}, "totalCents": 4250,
		"address": map[string]any{"city": "Malmö", "zip": "211 20"}, "note": "a < b & c"}
	b, err := codec.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if want := `<message><address><city>Malmö</city><zip>211 20</zip></address><items>widget</items><items>gasket</items>` +
		`<note>a &lt; b &amp; c</note><orderId>o-1</orderId><totalCents>4250</totalCents></message>`; string(b) != want {
		t.Errorf("wrote %s\nwant  %s", b, want)
	}
	var back map[string]any
	if err := codec.Unmarshal(contract.ContentTypeXML, b, &back); err != nil {
		t.Fatal(err)
	}
	m["totalCents"] = "4250" // XML has no numbers
	if !codectest.Same(t, back, m) {
		t.Errorf("read back %v", back)
	}
	// Attributes are read as children; text beside children as "".
	var attrs map[string]any
	err = codec.Unmarshal(contract.ContentTypeXML, []byte(`<message xmlns:a="urn:a" id="7"><a:item n="1">x</a:item>loose</message>`), &attrs)
	if want := map[string]any{"id": "7", "item": map[string]any{"n": "1", "": "x"}, "": "loose"}; err != nil || !codectest.Same(t, attrs, want) {
		t.Errorf("attributes: %v, %v; want %v", attrs, err, want)
	}
	for _, bad := range []map[string]any{{"1st": "x"}, {"a b": "x"}, {"": 1}} {
		if _, err := codec.Marshal(bad); err == nil || !strings.HasPrefix(err.Error(), "acemq: XML codec: ") {
			t.Errorf("%v: %v, want it refused", bad, err)
		}
	}
	if _, err := codec.Marshal(map[int]string{1: "x"}); err == nil {
		t.Error("a map of int keys was written")
	}
	// A root of only text is no map.
	if err := codec.Unmarshal(contract.ContentTypeXML, []byte(`<message>hi</message>`), &back); err == nil {
		t.Errorf("<message>hi</message> read as %v", back)
	}
	if err := codec.Unmarshal(contract.ContentTypeXML, []byte(`<message/>`), &back); err != nil || len(back) != 0 {
		t.Errorf("<message/>: %v, %v; want an empty map", back, err)
	}
}

// A DTD is refused, before anything is read; so is an entity nothing
// defines. XML's own entities and character references are read.
func TestDTDAndEntities(t *testing.T) {
	for name, body := range map[string]string{
		"DOCTYPE":            `<!DOCTYPE message><message><orderId>o-1</orderId></message>`,
		"external entity":    `<?xml version="1.0"?><!DOCTYPE message [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><message><orderId>&xxe;</orderId></message>`,
		"internal entity":    `<!DOCTYPE message [<!ENTITY e "o-1">]><message><orderId>&e;</orderId></message>`,
		"billion laughs":     `<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]><lolz>&lol2;</lolz>`,
		"declaration inside": `<message><!ENTITY e "x"><orderId>o-1</orderId></message>`,
		"after the root":     `<message><orderId>o-1</orderId></message><!DOCTYPE message>`,
	} {
		t.Run(name, func(t *testing.T) {
			for _, v := range []any{new(OrderPlaced), new(map[string]any)} {
				err := codec.Unmarshal(contract.ContentTypeXML, []byte(body), v)
				if !errors.Is(err, acemqxml.ErrDTD) || err.Error() != "acemq: XML codec: "+acemqxml.ErrDTD.Error() {
					t.Errorf("into %T: %v, want ErrDTD", v, err)
				}
			}
		})
	}
	// An entity with no DTD is undefined: a syntax error, never a lookup.
	var o OrderPlaced
	err := codec.Unmarshal(contract.ContentTypeXML, []byte(`<message><orderId>&xxe;</orderId></message>`), &o)
	var syntax *xml.SyntaxError
	if !errors.As(err, &syntax) || !strings.Contains(err.Error(), "invalid character entity &xxe;") {
		t.Errorf("an undefined entity: %v, want a *xml.SyntaxError", err)
	}
	if err := codec.Unmarshal(contract.ContentTypeXML, []byte(`<message><orderId>o&amp;1 &#233;&#x20AC;&lt;</orderId><![CDATA[<x>]]></message>`), &o); err != nil || o.OrderID != "o&1 é€<" {
		t.Errorf("XML's own entities: %q, %v", o.OrderID, err)
	}
}

// Everything else a body may be wrong by is named.
func TestUnmarshalErrors(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		is         error
		text       string
	}{
		{"empty", "", acemqxml.ErrNoRoot, "acemq: XML codec: the body holds no root element"},
		{"only a comment", "<!-- x -->", acemqxml.ErrNoRoot, "acemq: XML codec: the body holds no root element"},
		{"two roots", "<a/><b/>", acemqxml.ErrTrailing, "acemq: XML codec: the body holds more than its root element: the element <b> after the root"},
		{"text after", "<a/>x", acemqxml.ErrTrailing, "acemq: XML codec: the body holds more than its root element: text after the root element"},
		{"text before", "x<a/>", acemqxml.ErrTrailing, "acemq: XML codec: the body holds more than its root element: text before the root element"},
		{"unclosed", "<a><b></a>", nil, "acemq: XML codec: XML syntax error on line 1: element <b> closed by </a>"},
		{"cut short", "<a><b>", nil, "acemq: XML codec: XML syntax error on line 1: unexpected EOF"},
		{"an element's name XML has not", "<message><1st>x</1st></message>", nil, "acemq: XML codec: XML syntax error on line 1: invalid XML name: 1st"},
		// encoding/xml takes a colon alone, or at either end, as a name.
		{"an attribute's name", `<message :="x"/>`, acemqxml.ErrName, `acemq: XML codec: not an XML name: ":"`},
		{"an attribute's colon", `<message a:="x"/>`, acemqxml.ErrName, `acemq: XML codec: not an XML name: "a:"`},
		{"an element's colon", `<message><a:>x</a:></message>`, acemqxml.ErrName, `acemq: XML codec: not an XML name: "a:"`},
		{"Latin-1", `<?xml version="1.0" encoding="ISO-8859-1"?><a/>`, nil, `acemq: XML codec: xml: encoding "ISO-8859-1" declared but Decoder.CharsetReader is nil`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, v := range []any{new(OrderPlaced), new(map[string]any)} {
				err := codec.Unmarshal(contract.ContentTypeXML, []byte(tt.body), v)
				if err == nil || err.Error() != tt.text || tt.is != nil && !errors.Is(err, tt.is) {
					t.Errorf("into %T: %v\nwant %s", v, err, tt.text)
				}
			}
		})
	}
	deep := strings.Repeat("<a>", 10001) + strings.Repeat("</a>", 10001)
	if err := codec.Unmarshal(contract.ContentTypeXML, []byte(deep), new(map[string]any)); !errors.Is(err, acemqxml.ErrTooDeep) {
		t.Errorf("nested 10001 deep: %v, want ErrTooDeep", err)
	}
	if err := codec.Unmarshal(contract.ContentTypeXML, []byte("<a/>"), (*map[string]any)(nil)); err == nil {
		t.Error("decoded into a nil map pointer")
	}
}

// FuzzUnmarshal: no body panics the decoder, into a struct or a map, and a
// map it reads writes and reads back the same.
func FuzzUnmarshal(f *testing.F) {
	for _, s := range append(codectest.Load(f).Of(f, "xml"), codectest.LoadSamples(f).Of(f, "xml")...) {
		f.Add(s.Body)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var o OrderPlaced
		_ = codec.Unmarshal(contract.ContentTypeXML, body, &o)
		var m map[string]any
		if codec.Unmarshal(contract.ContentTypeXML, body, &m) != nil {
			return
		}
		b, err := codec.Marshal(m)
		if err != nil {
			t.Fatalf("%q read as %v, which does not write: %v", body, m, err)
		}
		var back map[string]any
		if err := codec.Unmarshal(contract.ContentTypeXML, b, &back); err != nil || !codectest.Same(t, back, m) {
			t.Fatalf("%q read as %v, written as %q, read back as %v, %v", body, m, b, back, err)
		}
	})
}

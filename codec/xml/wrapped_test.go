package xml_test

import (
	"errors"
	"testing"

	acemqxml "github.com/acemq-go/acemq/codec/xml"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/testing/codectest"
)

// Order is codec-samples.json's document. Lines is tagged as the Go peer,
// Ruby and Python write a list (the element repeated); JavaOrder's tag is
// Java's (Jackson's default: the list wrapped in an element of its name).
type Order struct {
	OrderID    string   `xml:"orderId"`
	Customer   string   `xml:"customer"`
	TotalCents int64    `xml:"totalCents"`
	Currency   string   `xml:"currency"`
	Paid       bool     `xml:"paid"`
	Lines      []string `xml:"lines"`
}

type JavaOrder struct {
	OrderID    string   `xml:"orderId"`
	Customer   string   `xml:"customer"`
	TotalCents int64    `xml:"totalCents"`
	Currency   string   `xml:"currency"`
	Paid       bool     `xml:"paid"`
	Lines      []string `xml:"lines>lines"`
}

var (
	order     = Order{OrderID: "A-1", Customer: "acme", TotalCents: 4250, Currency: "GBP", Paid: true, Lines: []string{"widget", "gasket"}}
	javaOrder = JavaOrder{OrderID: "A-1", Customer: "acme", TotalCents: 4250, Currency: "GBP", Paid: true, Lines: []string{"widget", "gasket"}}
)

// Both forms of a list, Java's wrapped one and the Go peer's repeated
// one, decode into either tag: a consumer of a mixed fleet reads both
// producers with one type. Into a map, Java's wrapper is the list.
func TestJavasWrappedListsDecode(t *testing.T) {
	for _, s := range codectest.LoadSamples(t).Of(t, "xml") {
		t.Run(s.Producer, func(t *testing.T) {
			var o Order
			if err := codec.Unmarshal(s.ContentType, s.Body, &o); err != nil || !codectest.Same(t, o, order) {
				t.Errorf("into []string `xml:\"lines\"`: %+v, %v; want %+v", o, err, order)
			}
			var j JavaOrder
			if err := codec.Unmarshal(s.ContentType, s.Body, &j); err != nil || !codectest.Same(t, j, javaOrder) {
				t.Errorf("into []string `xml:\"lines>lines\"`: %+v, %v; want %+v", j, err, javaOrder)
			}
			var m map[string]any
			if err := codec.Unmarshal(s.ContentType, s.Body, &m); err != nil || !codectest.Same(t, m, s.Expected) {
				t.Errorf("into a map: %v, %v; want %s", m, err, s.Expected)
			}
		})
	}
}

// The tag lines>lines writes Java's bytes, the tag lines the Go peer's.
func TestMarshalWritesEitherListForm(t *testing.T) {
	samples := codectest.LoadSamples(t).Of(t, "xml")
	for _, tt := range []struct {
		producer string
		v        any
	}{{"java", struct {
		XMLName struct{} `xml:"Order"`
		JavaOrder
	}{JavaOrder: javaOrder}}, {"go", struct {
		XMLName struct{} `xml:"order"`
		Order
	}{Order: order}}} {
		b, err := codec.Marshal(tt.v)
		if want := codectest.By(t, samples, tt.producer).Body; err != nil || string(b) != string(want) {
			t.Errorf("%s: Marshal wrote\n%s, %v\nwant\n%s", tt.producer, b, err, want)
		}
	}
}

type item struct {
	SKU string `xml:"sku"`
	Qty int    `xml:"qty"`
}

// Jackson wraps a list of objects too, and names the wrapper and its
// items alike; a wrapper of one item, or of items named otherwise
// (@JacksonXmlProperty), is read as well.
func TestWrappedListShapes(t *testing.T) {
	type basket struct {
		Items []item   `xml:"items"`
		Tags  []string `xml:"tags"`
		Note  string   `xml:"note"`
	}
	for body, want := range map[string]basket{
		`<Basket><items><items><sku>a</sku><qty>1</qty></items><items><sku>b</sku><qty>2</qty></items></items></Basket>`: {Items: []item{{"a", 1}, {"b", 2}}},
		`<Basket><items><sku>a</sku><qty>1</qty></items><items><sku>b</sku><qty>2</qty></items></Basket>`:                {Items: []item{{"a", 1}, {"b", 2}}},
		`<Basket><tags><tags>x</tags></tags><note>n</note></Basket>`:                                                     {Tags: []string{"x"}, Note: "n"},
		`<Basket><tags> <tag>x</tag> <tag>y</tag> </tags></Basket>`:                                                      {Tags: []string{"x", "y"}},
		`<Basket><tags>x</tags><tags>y</tags></Basket>`:                                                                  {Tags: []string{"x", "y"}},
	} {
		var got basket
		if err := codec.Unmarshal(contract.ContentTypeXML, []byte(body), &got); err != nil || !codectest.Same(t, got, want) {
			t.Errorf("%s:\n%+v, %v\nwant %+v", body, got, err, want)
		}
	}
	type javaBasket struct {
		Items []item `xml:"items>items"`
	}
	for _, body := range []string{
		`<Basket><items><items><sku>a</sku><qty>1</qty></items><items><sku>b</sku><qty>2</qty></items></items></Basket>`,
		`<Basket><items><sku>a</sku><qty>1</qty></items><items><sku>b</sku><qty>2</qty></items></Basket>`,
	} {
		var got javaBasket
		if err := codec.Unmarshal(contract.ContentTypeXML, []byte(body), &got); err != nil || !codectest.Same(t, got.Items, []item{{"a", 1}, {"b", 2}}) {
			t.Errorf("%s into items>items:\n%+v, %v", body, got, err)
		}
	}
	var m map[string]any
	body := `<Basket><items><items><sku>a</sku></items><items><sku>b</sku></items></items><tags><tags>x</tags></tags></Basket>`
	want := map[string]any{"items": []any{map[string]any{"sku": "a"}, map[string]any{"sku": "b"}}, "tags": "x"}
	if err := codec.Unmarshal(contract.ContentTypeXML, []byte(body), &m); err != nil || !codectest.Same(t, m, want) {
		t.Errorf("into a map: %v, %v; want %v", m, err, want)
	}
}

// A shape the type cannot hold is an error (which parks the message), never
// an empty or missing value: elements where a field takes text, a wrapper
// holding text beside its items or items of two names.
func TestShapesThatCannotBeMappedAreErrors(t *testing.T) {
	for _, body := range []string{
		`<Order><customer><name>acme</name></customer></Order>`,
		`<Order><lines><lines>widget</lines>loose text</lines></Order>`,
		`<Order><lines><a>widget</a><b>gasket</b></lines></Order>`,
		`<Order><lines><lines><part>widget</part></lines></lines></Order>`,
		`<Order><lines>widget<lines>gasket</lines></lines></Order>`,
	} {
		for _, v := range []any{new(Order), new(JavaOrder)} {
			err := codec.Unmarshal(contract.ContentTypeXML, []byte(body), v)
			if !errors.Is(err, acemqxml.ErrShape) {
				t.Errorf("%s into %T: %+v, %v; want ErrShape", body, v, v, err)
			}
		}
	}
}

// In a map, a list in a list is written wrapped, as Java writes a list,
// and reads back the same; a wrapped list beside a repeated element stays
// one item.
func TestMapListInAList(t *testing.T) {
	m := map[string]any{"b": []any{[]any{"x", "y"}, "z"}}
	b, err := codec.Marshal(m)
	if err != nil || string(b) != `<message><b><b>x</b><b>y</b></b><b>z</b></message>` {
		t.Fatalf("wrote %s, %v", b, err)
	}
	var back map[string]any
	if err := codec.Unmarshal(contract.ContentTypeXML, b, &back); err != nil || !codectest.Same(t, back, m) {
		t.Errorf("read back %v, %v; want %v", back, err, m)
	}
}

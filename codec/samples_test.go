package codec_test

import (
	"testing"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/codec/toml"
	"github.com/acemq-go/acemq/codec/xml"
	"github.com/acemq-go/acemq/codec/yaml"
	"github.com/acemq-go/acemq/internal/testing/codectest"
)

// sampleOrder is codec-samples.json's document, read from every text
// format with one type: Java's wrapped XML list and the Go peer's repeated
// one both fill Lines.
type sampleOrder struct {
	OrderID    string   `yaml:"orderId" toml:"orderId" xml:"orderId"`
	Customer   string   `yaml:"customer" toml:"customer" xml:"customer"`
	TotalCents int64    `yaml:"totalCents" toml:"totalCents" xml:"totalCents"`
	Currency   string   `yaml:"currency" toml:"currency" xml:"currency"`
	Paid       bool     `yaml:"paid" toml:"paid" xml:"paid"`
	Lines      []string `yaml:"lines" toml:"lines" xml:"lines"`
}

// Every text sample of the family's codec-samples.json (Java's and the Go
// peer's YAML, TOML and XML) decodes to the document the file says, into
// a map and into a struct. The binary samples are codec/protobuf's and
// codec/avro's (their own modules).
func TestCodecSamplesDecodeToTheirDocument(t *testing.T) {
	f := codectest.LoadSamples(t)
	want := sampleOrder{OrderID: "A-1", Customer: "acme", TotalCents: 4250, Currency: "GBP", Paid: true, Lines: []string{"widget", "gasket"}}
	for format, codec := range map[string]acemq.Codec{"yaml": yaml.Codec, "toml": toml.Codec, "xml": xml.Codec} {
		for _, s := range f.Of(t, format) {
			t.Run(format+"/"+s.Producer, func(t *testing.T) {
				if !codec.Reads(s.ContentType) {
					t.Fatalf("the codec does not read %q", s.ContentType)
				}
				var m map[string]any
				if err := codec.Unmarshal(s.ContentType, s.Body, &m); err != nil || !codectest.Same(t, m, s.Expected) {
					t.Errorf("into a map: %v, %v\nwant %s", m, err, s.Expected)
				}
				var o sampleOrder
				if err := codec.Unmarshal(s.ContentType, s.Body, &o); err != nil || !codectest.Same(t, o, want) {
					t.Errorf("into a struct: %+v, %v\nwant %+v", o, err, want)
				}
			})
		}
	}
}

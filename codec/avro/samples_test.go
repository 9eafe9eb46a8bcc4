package avro_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/acemq-go/acemq/internal/testing/codectest"
	"github.com/acemq-go/acemq/schemaregistry"
)

// fixedIDs is a Registry holding definitions under the ids a fixture
// names, as another library's registry gave them.
type fixedIDs map[uint32]string

func (r fixedIDs) Register(_ context.Context, def string) (uint32, error) {
	for id, d := range r {
		if d == def {
			return id, nil
		}
	}
	return 0, schemaregistry.Unknown(0) // a test registers nothing new
}

func (r fixedIDs) Schema(_ context.Context, id uint32) (string, error) {
	if def, ok := r[id]; ok {
		return def, nil
	}
	return "", schemaregistry.Unknown(id)
}

// sampleOrder is codec-samples.json's record, org.acemq.samples.Order.
type sampleOrder struct {
	OrderID    string `avro:"orderId"`
	Customer   string `avro:"customer"`
	TotalCents int64  `avro:"totalCents"`
	Currency   string `avro:"currency"`
	Paid       bool   `avro:"paid"`
}

// Every Avro sample of the family's codec-samples.json (Java's and the Go
// peer's, fixed and registered under schema id 1) decodes to the record
// the file says, into a map and into a struct, and the codec writes the
// samples' bytes.
func TestCodecSamplesDecodeToTheirRecord(t *testing.T) {
	f := codectest.LoadSamples(t)
	want := sampleOrder{OrderID: "A-1", Customer: "acme", TotalCents: 4250, Currency: "GBP", Paid: true}
	codecs := map[string]interface {
		Reads(string) bool
		Marshal(any) ([]byte, error)
		Unmarshal(string, []byte, any) error
	}{
		"avro-fixed":      fixed(t, f.AvroSchema),
		"avro-registered": registered(t, f.AvroSchema, fixedIDs{1: f.AvroSchema}),
	}
	for format, c := range codecs {
		for _, s := range f.Of(t, format) {
			t.Run(format+"/"+s.Producer, func(t *testing.T) {
				if !c.Reads(s.ContentType) {
					t.Fatalf("the codec does not read %q", s.ContentType)
				}
				var m map[string]any
				if err := c.Unmarshal(s.ContentType, s.Body, &m); err != nil || !codectest.Same(t, m, s.Expected) {
					t.Errorf("into a map: %v, %v; want %s", m, err, s.Expected)
				}
				var o sampleOrder
				if err := c.Unmarshal(s.ContentType, s.Body, &o); err != nil || o != want {
					t.Errorf("into a struct: %+v, %v; want %+v", o, err, want)
				}
				if b, err := c.Marshal(want); err != nil || !bytes.Equal(b, s.Body) {
					t.Errorf("Marshal wrote %x, %v; the %s library %x", b, err, s.Producer, s.Body)
				}
			})
		}
	}
}

// Every case of the family's avro-resolution-fixtures.json, asserted as
// its howToAssert says: the writer's schema registered under the case's
// id, the body decoded and compared as a map with both columns this
// library reaches. A registered codec always resolves the writer's schema
// onto its own, so the codec's schema decides the column: the reader's
// schema gives "resolved" (a field the writer omitted filled from the
// reader's default, one it added skipped), the writer's own schema gives
// "writerShape" (resolving a schema onto itself changes nothing).
func TestAvroResolutionFixtures(t *testing.T) {
	f := codectest.LoadAvroResolution(t)
	for _, c := range f.Cases {
		t.Run(c.Case, func(t *testing.T) {
			reg := fixedIDs{c.SchemaID: c.WriterSchema}
			for _, column := range []struct {
				name   string
				schema string
				want   json.RawMessage
			}{
				{"resolved", c.ReaderSchema, c.Resolved},
				{"writerShape", c.WriterSchema, c.WriterShape},
			} {
				var got map[string]any
				err := registered(t, column.schema, reg).Unmarshal("", c.Body, &got)
				if err != nil || !codectest.Same(t, got, column.want) {
					t.Errorf("%s: %v, %v; want %s", column.name, got, err, column.want)
				}
			}
		})
	}
}

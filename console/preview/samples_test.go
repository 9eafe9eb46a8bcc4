package preview

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/acemq-go/acemq/internal/testing/codectest"
)

// The family's codec samples (testdata/fixtures/codec-samples.json: one
// order written by the Java and Go libraries in every binary and text
// format) each preview readably: the text formats as their own lines, a
// google.protobuf.Struct by its fields, its numbers (doubles) as numbers,
// Avro decoded with the samples' schema, fixed or registered.
func TestCodecSamplesPreviewReadably(t *testing.T) {
	data, err := os.ReadFile(codectest.Path(t, "codec-samples.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		AvroSchema json.RawMessage `json:"avroSchema"`
		Samples    []struct {
			Producer, Format, ContentType string
			Body                          []byte `json:"bodyBase64"`
		} `json:"samples"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	schema := string(f.AvroSchema)
	r := newReader(t, Options{AvroSchema: schema, Registry: fixedRegistry{1: schema}, Limit: 4096})
	formats := map[string]bool{}
	for _, s := range f.Samples {
		formats[s.Format] = true
		t.Run(s.Format+"/"+s.Producer, func(t *testing.T) {
			p := r.Body(t.Context(), s.ContentType, s.Body)
			if p.Err != nil || p.Need != NeedNothing || p.Truncated {
				t.Fatalf("%+v", p)
			}
			// Every format carries the order's id, customer and total
			// (XML as text, protobuf's Struct as a double).
			for _, want := range []string{"A-1", "acme", "4250"} {
				if !strings.Contains(p.Text, want) {
					t.Errorf("the preview lacks %q: %s (%s)", want, p.Text, p.Decoded())
				}
			}
			switch s.Format {
			case "yaml", "toml":
				if strings.Count(p.Text, "\n") < 5 || p.Text != string(s.Body) {
					t.Errorf("%s not kept as its own lines: %q", s.Format, p.Text)
				}
			case "protobuf":
				if p.Decoded() != "protobuf wire format, no schema" || !strings.Contains(p.Text, "4250.0") || strings.Contains(p.Text, "0x") {
					t.Errorf("a Struct not shown by its field types: %s", p.Text)
				}
			case "avro-fixed", "avro-registered":
				if !strings.Contains(p.Text, `"totalCents":4250`) || !strings.Contains(p.Decoded(), "avro, schema org.acemq.samples.Order") {
					t.Errorf("Avro not decoded: %s (%s)", p.Text, p.Decoded())
				}
			}
			t.Logf("%s > %s", p.Decoded(), p.Text)
		})
	}
	for _, want := range []string{"yaml", "toml", "xml", "protobuf", "avro-fixed", "avro-registered"} {
		if !formats[want] {
			t.Errorf("no %s sample in the fixtures", want)
		}
	}
}

package codectest

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

// LoadSamples reads codec-samples.json from the module's testdata: one
// order in every format as the Java and Go libraries' own codecs wrote it
// (Java's XML with Jackson's wrapped list). Each sample's Expected is the
// document the file says it decodes to: its document for YAML, TOML and
// XML (XML's values as text, since XML has no types: "4250", "true"), its
// record for protobuf and Avro. AvroSchema is the Avro samples' schema.
func LoadSamples(t testing.TB) Fixtures {
	t.Helper()
	raw, err := os.ReadFile(Path(t, "codec-samples.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Document   map[string]any  `json:"document"`
		Record     map[string]any  `json:"record"`
		AvroSchema json.RawMessage `json:"avroSchema"`
		Samples    []struct {
			Producer    string `json:"producer"`
			Format      string `json:"format"`
			ContentType string `json:"contentType"`
			Body        []byte `json:"bodyBase64"`
		} `json:"samples"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatalf("codec-samples.json: %v", err)
	}
	// "what" says what the value is; it is not in it.
	delete(file.Document, "what")
	delete(file.Record, "what")
	expected := map[string]any{"yaml": file.Document, "toml": file.Document, "xml": asText(file.Document)}
	f := Fixtures{AvroSchema: string(file.AvroSchema)}
	for _, s := range file.Samples {
		want, ok := expected[s.Format]
		if !ok {
			want = file.Record
		}
		b, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		f.Samples = append(f.Samples, Sample{Format: s.Format, Producer: s.Producer, ContentType: s.ContentType, Body: s.Body, Expected: b})
	}
	return f
}

// asText is v with every number and boolean written as text, as XML
// carries them.
func asText(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			out[k] = asText(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = asText(e)
		}
		return out
	case float64, bool:
		return fmt.Sprint(v)
	}
	return v
}

// AvroResolution is avro-resolution-fixtures.json: Avro bodies a writer's
// schema wrote, each to be read onto a reader's schema, and what a reader
// sees when it resolves (Resolved) and when it does not (WriterShape).
type AvroResolution struct {
	HowToAssert string               `json:"howToAssert"`
	Cases       []AvroResolutionCase `json:"cases"`
}

// AvroResolutionCase is one writer→reader case.
type AvroResolutionCase struct {
	Case         string          `json:"case"`
	SchemaID     uint32          `json:"schemaId"` // the writer's schema's id, in the body's framing
	WriterSchema string          `json:"writerSchema"`
	ReaderSchema string          `json:"readerSchema"`
	Body         []byte          `json:"bodyBase64"`
	Resolved     json.RawMessage `json:"resolved"`
	WriterShape  json.RawMessage `json:"writerShape"`
}

// LoadAvroResolution reads avro-resolution-fixtures.json from the module's
// testdata.
func LoadAvroResolution(t testing.TB) AvroResolution {
	t.Helper()
	raw, err := os.ReadFile(Path(t, "avro-resolution-fixtures.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f AvroResolution
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatalf("avro-resolution-fixtures.json: %v", err)
	}
	if len(f.Cases) == 0 {
		t.Fatal("avro-resolution-fixtures.json holds no case")
	}
	return f
}

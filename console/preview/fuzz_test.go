package preview

import (
	"testing"
	"unicode/utf8"

	"github.com/acemq-go/acemq/claimcheck"
	"github.com/acemq-go/acemq/internal/testing/codectest"
)

// contentTypes are the types FuzzBody reads its bodies as, by index.
var contentTypes = []string{"", "application/json", "application/x-protobuf", "avro/binary", "application/vnd.acemq.avro",
	"application/avro", "application/vnd.acemq.encrypted", "application/yaml", "application/octet-stream"}

// FuzzBody reads any body as every content type, with everything given: it
// never panics, keeps to the limit, and says how it read the body.
func FuzzBody(f *testing.F) {
	samples, keyring := cryptoSamples(f)
	for _, s := range samples {
		f.Add(uint8(6), s.Body)
	}
	for _, format := range []string{"protobuf", "avro", "avro-registered", "yaml"} {
		for _, s := range codectest.Load(f).Of(f, format) {
			f.Add(uint8(0), s.Body)
		}
	}
	f.Add(uint8(1), []byte("\xac\x01\x00{}"))
	f.Add(uint8(1), []byte("\xac\x01\x01missing"))
	schema := avroSchemaText(f)
	r := newReader(f, Options{Keyring: keyring, AvroSchema: schema, Registry: registryWith(f, schema), ClaimStore: &claimcheck.Memory{}, Limit: 64})
	f.Fuzz(func(t *testing.T, ct uint8, body []byte) {
		for _, contentType := range []string{contentTypes[int(ct)%len(contentTypes)], contentTypes[(int(ct)+1)%len(contentTypes)]} {
			p := r.Body(t.Context(), contentType, body)
			if len(p.Text) > 64 || !utf8.ValidString(p.Text) || len(p.Steps) == 0 || (p.Text != "" && (p.Err != nil || p.Need != NeedNothing)) {
				t.Fatalf("%q as %q: %+v", body, contentType, p)
			}
		}
	})
}

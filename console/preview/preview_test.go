package preview

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/acemq-go/acemq/claimcheck"
	"github.com/acemq-go/acemq/codec/avro"
	"github.com/acemq-go/acemq/encryption"
	"github.com/acemq-go/acemq/internal/testing/codectest"
	"github.com/acemq-go/acemq/schemaregistry"
)

// cryptoSamples are testdata/fixtures/crypto-interop.json's samples and the
// keyring of its two keys.
func cryptoSamples(t testing.TB) ([]cryptoSample, *encryption.Keyring) {
	t.Helper()
	data, err := os.ReadFile("../../testdata/fixtures/crypto-interop.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Keys map[string]struct {
			ID     string `json:"id"`
			Base64 string `json:"base64"`
		} `json:"keys"`
		Samples []cryptoSample `json:"samples"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	k, err := encryption.ParseKeys(f.Keys["first"].ID + " " + f.Keys["first"].Base64 + " current\n" + f.Keys["second"].ID + " " + f.Keys["second"].Base64)
	if err != nil {
		t.Fatal(err)
	}
	return f.Samples, k
}

type cryptoSample struct {
	Library   string `json:"library"`
	Plaintext string `json:"plaintext"`
	KeyID     string `json:"keyId"`
	Body      []byte `json:"body"`
}

// avroSchemaText is the fixtures' Avro schema.
func avroSchemaText(t testing.TB) string {
	t.Helper()
	data, err := os.ReadFile(codectest.Path(t, "codec-interop.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Schema string `json:"avro_schema"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	return f.Schema
}

// registryWith is a registry holding schema under id 7, as the fixtures'
// registered bodies name it.
func registryWith(t testing.TB, schema string) schemaregistry.Registry {
	t.Helper()
	return fixedRegistry{7: schema}
}

type fixedRegistry map[uint32]string

func (r fixedRegistry) Register(context.Context, string) (uint32, error) {
	return 0, errors.New("read only")
}

func (r fixedRegistry) Schema(_ context.Context, id uint32) (string, error) {
	if s, ok := r[id]; ok {
		return s, nil
	}
	return "", schemaregistry.Unknown(id)
}

func newReader(t testing.TB, o Options) *Reader {
	t.Helper()
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

const (
	orderJSON = `{"orderId":"o-1","totalCents":4250,"tenant":"acme"}`
	orderPB   = `{1: "o-1", 2: 4250, 3: "acme"}`
)

// Every codec fixture, by the rules of its content type, with and without
// what it needs.
func TestCodecFixtures(t *testing.T) {
	schema := avroSchemaText(t)
	bare := newReader(t, Options{})
	full := newReader(t, Options{AvroSchema: schema, Registry: registryWith(t, schema)})
	for _, format := range []string{"yaml", "toml", "xml", "protobuf", "avro", "avro-registered"} {
		for _, s := range codectest.Load(t).Of(t, format) {
			t.Run(format+"/"+s.Producer, func(t *testing.T) {
				got, gotBare := full.Body(t.Context(), s.ContentType, s.Body), bare.Body(t.Context(), s.ContentType, s.Body)
				switch format {
				case "yaml", "toml", "xml":
					for _, p := range []Preview{got, gotBare} {
						if p.Decoded() != format || p.Err != nil || p.Rendered || p.Text != string(s.Body[:min(len(s.Body), DefaultLimit)]) || p.Truncated != (len(s.Body) > DefaultLimit) {
							t.Errorf("%+v, want the body as %s", p, format)
						}
					}
				case "protobuf":
					for _, p := range []Preview{got, gotBare} {
						if p.Decoded() != "protobuf wire format, no schema" || p.Text != orderPB || !p.Rendered || p.Err != nil {
							t.Errorf("%+v, want %s", p, orderPB)
						}
					}
				case "avro":
					if got.Decoded() != "avro, schema org.acemq.test.OrderPlaced" || got.Text != orderJSON || got.Err != nil {
						t.Errorf("with the schema: %+v, want %s", got, orderJSON)
					}
					if gotBare.Decoded() != "avro, no schema" || gotBare.Need != NeedAvroSchema || gotBare.Text != "" {
						t.Errorf("without the schema: %+v", gotBare)
					}
				case "avro-registered":
					if got.Decoded() != "registered avro, schema id 7 > avro, schema org.acemq.test.OrderPlaced" || got.Text != orderJSON || got.Err != nil {
						t.Errorf("with the registry: %+v, want %s", got, orderJSON)
					}
					if gotBare.Decoded() != "registered avro, schema id 7" || gotBare.Need != NeedRegistry || gotBare.Text != "" {
						t.Errorf("without the registry: %+v", gotBare)
					}
				}
			})
		}
	}
}

// Every encrypted fixture decrypts and previews as text; without a keyring
// the key id is shown; with another keyring the error names the id.
func TestCryptoFixtures(t *testing.T) {
	samples, keyring := cryptoSamples(t)
	other, err := encryption.NewKeyring("2026-01", make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	with, without, wrong := newReader(t, Options{Keyring: keyring}), newReader(t, Options{}), newReader(t, Options{Keyring: other})
	for _, s := range samples {
		t.Run(s.Library+"/"+s.KeyID+"/"+s.Plaintext[:min(len(s.Plaintext), 8)], func(t *testing.T) {
			step := `encrypted, key id "` + s.KeyID + `"`
			p := with.Body(t.Context(), "application/vnd.acemq.encrypted", s.Body)
			want := s.Plaintext[:min(len(s.Plaintext), DefaultLimit)]
			if p.Decoded() != step+" > text" || p.Text != want || p.Err != nil || p.Need != NeedNothing {
				t.Errorf("decrypted: %+v, want %q", p, want)
			}
			if p := without.Body(t.Context(), "application/vnd.acemq.encrypted; v=1", s.Body); p.Decoded() != step || p.Need != NeedKeys || p.Text != "" {
				t.Errorf("without keys: %+v", p)
			}
			p = wrong.Body(t.Context(), "application/vnd.acemq.encrypted", s.Body)
			wantErr := encryption.ErrUnknownKey
			if s.KeyID == "2026-01" {
				wantErr = encryption.ErrDecrypt
			}
			if !errors.Is(p.Err, wantErr) || !strings.Contains(p.Err.Error(), s.KeyID) || p.Text != "" {
				t.Errorf("with another keyring: %+v, want %v naming %q", p, wantErr, s.KeyID)
			}
		})
	}
}

// The layers, in either order, and what each needs.
func TestLayers(t *testing.T) {
	ctx := t.Context()
	samples, keyring := cryptoSamples(t)
	store := &claimcheck.Memory{}
	key, err := store.Put(ctx, []byte(`{"big":true}`))
	if err != nil {
		t.Fatal(err)
	}
	inline := append([]byte{0xAC, 0x01, 0x00}, `{"n":1}`...)
	offloaded := append([]byte{0xAC, 0x01, 0x01}, key...)
	encryptedInline, err := keyring.Encrypt(inline)
	if err != nil {
		t.Fatal(err)
	}
	pb := []byte{0x0a, 0x03, 'o', '-', '1', 0x10, 0x9a, 0x21, 0x1a, 0x02, 0x08, 0x07}
	encryptedPB, err := keyring.Encrypt(pb)
	if err != nil {
		t.Fatal(err)
	}
	gone := append([]byte{0xAC, 0x01, 0x01}, "no-such-key"...)
	full := newReader(t, Options{Keyring: keyring, ClaimStore: store})
	bare := newReader(t, Options{})
	tests := []struct {
		name, contentType string
		body              []byte
		r                 *Reader
		decoded, text     string
		need              Need
		err               error
	}{
		{"inline", "application/json", inline, bare, "claim check, inline > json", `{"n":1}`, NeedNothing, nil},
		{"offloaded", "application/json", offloaded, full, `claim check, offloaded under key "` + key + `" > json`, `{"big":true}`, NeedNothing, nil},
		{"offloaded without a store", "application/json", offloaded, bare, `claim check, offloaded under key "` + key + `"`, "", NeedClaimStore, nil},
		{"offloaded and gone", "application/json", gone, full, `claim check, offloaded under key "no-such-key"`, "", NeedNothing, claimcheck.ErrNotFound},
		{"offloaded without a key", "application/json", []byte{0xAC, 0x01, 0x01}, full, "claim check, offloaded", "", NeedNothing, claimcheck.ErrMalformed},
		{"encrypted claim check", "application/vnd.acemq.encrypted", encryptedInline, full, `encrypted, key id "2026-01" > claim check, inline > text`, `{"n":1}`, NeedNothing, nil},
		{"claim check of an encrypted body", "application/vnd.acemq.encrypted", append([]byte{0xAC, 0x01, 0x00}, samples[1].Body...), full,
			`claim check, inline > encrypted, key id "2026-01" > text`, `{"id":"A-1","total":1}`, NeedNothing, nil},
		{"encrypted protobuf", "application/vnd.acemq.encrypted", encryptedPB, full, `encrypted, key id "2026-01" > protobuf wire format, guessed`, `{1: "o-1", 2: 4250, 3: {1: 7}}`, NeedNothing, nil},
		{"not encrypted", "application/vnd.acemq.encrypted", []byte("plain"), full, "encrypted", "", NeedNothing, encryption.ErrNotEncrypted},
		{"truncated", "application/vnd.acemq.encrypted", samples[0].Body[:20], full, "encrypted", "", NeedNothing, encryption.ErrTruncated},
		{"no content type, text", "", []byte("by hand"), bare, "text", "by hand", NeedNothing, nil},
		{"bytes", "application/octet-stream", []byte{0xff, 0xfe, 0x00}, bare, "bytes", "", NeedNothing, nil},
		{"text type, not text", "application/json", []byte{0xff, 0xfe}, bare, "bytes", "", NeedNothing, nil},
		{"empty", "application/json", nil, bare, "json", "", NeedNothing, nil},
		{"not protobuf", "application/x-protobuf", []byte{0x0f}, bare, "protobuf wire format, no schema", "", NeedNothing, ErrNotProtobuf},
		{"registered, not framed", "application/vnd.acemq.avro", []byte{0x06}, bare, "registered avro", "", NeedNothing, avro.ErrNotFramed},
		{"nested too deep", "application/json", []byte(strings.Repeat("\xac\x01\x00", maxLayers+1) + "{}"), bare,
			strings.Repeat("claim check, inline > ", maxLayers) + "bytes", "", NeedNothing, ErrTooDeep},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.r.Body(ctx, tt.contentType, tt.body)
			if p.Decoded() != tt.decoded || p.Text != tt.text || p.Need != tt.need || !errors.Is(p.Err, tt.err) || (tt.err == nil) != (p.Err == nil) {
				t.Errorf("%+v\nwant decoded %q, text %q, need %d, error %v", p, tt.decoded, tt.text, tt.need, tt.err)
			}
		})
	}
}

// Registered Avro: an id the registry does not have, and the shared types
// both Avro codecs read.
func TestAvro(t *testing.T) {
	schema := avroSchemaText(t)
	fixed, registered := codectest.By(t, codectest.Load(t).Of(t, "avro"), "java"), codectest.By(t, codectest.Load(t).Of(t, "avro-registered"), "java")
	r := newReader(t, Options{Registry: fixedRegistry{}})
	if p := r.Body(t.Context(), registered.ContentType, registered.Body); !errors.Is(p.Err, schemaregistry.ErrUnknownSchema) || !strings.Contains(p.Err.Error(), "schema id 7") {
		t.Errorf("an unknown id: %+v", p)
	}
	full := newReader(t, Options{AvroSchema: schema, Registry: registryWith(t, schema)})
	for _, body := range [][]byte{fixed.Body, registered.Body} {
		if p := full.Body(t.Context(), "application/vnd.acme.order+avro", body); p.Text != orderJSON || p.Err != nil {
			t.Errorf("application/*+avro of % x: %+v", body, p)
		}
	}
	if p := full.Body(t.Context(), "avro/binary", append(fixed.Body, 0)); !errors.Is(p.Err, avro.ErrTrailingBytes) {
		t.Errorf("a byte after the value: %+v", p)
	}
	if _, err := New(Options{AvroSchema: `{"type":"record"`}); err == nil {
		t.Error("New took a schema that does not parse")
	}
	nested := `{"type":"record","name":"R","namespace":"n","fields":[{"name":"z","type":["null",{"type":"record","name":"S","fields":[{"name":"b","type":"long"},{"name":"a","type":"string"}]}]},{"name":"l","type":{"type":"array","items":"n.S"}},{"name":"m","type":{"type":"map","values":"long"}}]}`
	c, err := avro.Fixed(nested)
	if err != nil {
		t.Fatal(err)
	}
	s := map[string]any{"b": int64(2), "a": "x"}
	body, err := c.Marshal(map[string]any{"z": map[string]any{"n.S": s}, "l": []any{s}, "m": map[string]any{"k": int64(1)}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"z":{"n.S":{"b":2,"a":"x"}},"l":[{"b":2,"a":"x"}],"m":{"k":1}}`
	if p := newReader(t, Options{AvroSchema: nested}).Body(t.Context(), "avro/binary", body); p.Text != want {
		t.Errorf("nested records: %+v, want %s", p, want)
	}
}

// The wire dump: every wire type, nesting, and bodies that are not wire
// format.
func TestDumpWire(t *testing.T) {
	tests := []struct {
		body []byte
		want string
		err  bool
	}{
		{nil, "{}", false},
		{[]byte{0x08, 0x96, 0x01}, "{1: 150}", false},
		{[]byte{0x0d, 1, 0, 0, 0, 0x11, 2, 0, 0, 0, 0, 0, 0, 0}, "{1: 1, 2: 2}", false},                                       // integers: as floats, denormals
		{[]byte{0x0d, 0xff, 0xff, 0xff, 0xff, 0x11, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "{1: -1, 2: -2}", false}, // NaN as floats
		{[]byte{0x0d, 0, 0, 0x2a, 0x42, 0x11, 0, 0, 0, 0, 0, 0x40, 0x45, 0x40}, "{1: 42.5, 2: 42.5}", false},                  // a float, a double
		{[]byte{0x11, 0, 0, 0, 0, 0, 0x9a, 0xb0, 0x40}, "{2: 4250.0}", false},                                                 // a whole double
		{[]byte{0x11, 0, 0, 0, 0, 0, 0, 0, 0}, "{2: 0.0}", false},
		{[]byte{0x12, 0x02, 0xff, 0x00}, "{2: 0xff00}", false},
		{[]byte{0x1a, 0x03, 0x08, 0x01, 0x08}, "{3: 0x080108}", false}, // not a message: bytes
		{[]byte{0x23, 0x08, 0x05, 0x24}, "{4: {1: 5}}", false},         // a group
		{[]byte{0x2a, 0x00}, `{5: ""}`, false},
		{[]byte{0x08}, "", true},
		{[]byte{0x24}, "", true}, // an end group alone
		{[]byte{0x00}, "", true}, // field 0
		{[]byte{0x0a, 0x05, 'a'}, "", true},
		{[]byte(strings.Repeat("\x0b", maxNesting+2)), "", true},
	}
	for _, tt := range tests {
		got, err := dumpWire(tt.body, 0)
		if got != tt.want || (err != nil) != tt.err || (err != nil && !errors.Is(err, ErrNotProtobuf)) {
			t.Errorf("dumpWire(% x) = %q, %v; want %q, error %v", tt.body, got, err, tt.want, tt.err)
		}
	}
}

// A long body is cut to the limit, never inside a rune; a rendering too.
func TestLimit(t *testing.T) {
	r := newReader(t, Options{Limit: 10})
	p := r.Body(t.Context(), "text/plain", []byte("123456789ö and more"))
	if p.Text != "123456789" || !p.Truncated {
		t.Errorf("%+v", p)
	}
	p = r.Body(t.Context(), "application/x-protobuf", []byte{0x0a, 0x0c, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l'})
	if p.Text != `{1: "abcde` || !p.Truncated || !p.Rendered {
		t.Errorf("%+v", p)
	}
	if p := r.Body(t.Context(), "text/plain", []byte("0123456789")); p.Truncated || p.Text != "0123456789" {
		t.Errorf("a body of exactly the limit: %+v", p)
	}
}

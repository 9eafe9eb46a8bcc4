// Package codectest reads the family's body fixtures for the tests:
// testdata/fixtures/codec-interop.json, the bodies the Java and Go AceMQ
// libraries write in each format, with the value each decodes to and the
// Avro schema they were written with; crypto-interop.json, the bodies
// the Java, Python and Ruby libraries encrypted, with their keys;
// codec-samples.json, one order in every format (LoadSamples); and
// avro-resolution-fixtures.json, Avro writer→reader cases
// (LoadAvroResolution).
package codectest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// Fixtures is codec-interop.json, as far as the codecs' tests read it.
type Fixtures struct {
	AvroSchema string   `json:"avro_schema"`
	Samples    []Sample `json:"samples"`
}

// Sample is one body another library wrote.
type Sample struct {
	Format      string `json:"format"` // "yaml", "toml", "xml", "protobuf", "avro", ...
	Producer    string `json:"producer"`
	ContentType string `json:"content_type"`
	Body        []byte `json:"body_base64"`
	// Expected is the value the body decodes to, as the fixture writes it:
	// json.Unmarshal it into a typed value, or compare with Same.
	Expected json.RawMessage `json:"expected"`
}

// Load reads codec-interop.json from the module's testdata.
func Load(t testing.TB) Fixtures {
	t.Helper()
	raw, err := os.ReadFile(Path(t, "codec-interop.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f Fixtures
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatalf("codec-interop.json: %v", err)
	}
	return f
}

// Crypto is crypto-interop.json: encrypted bodies, their keys by name
// ("first", "second") and their plaintexts.
type Crypto struct {
	Keys map[string]struct {
		ID     string `json:"id"`
		Base64 string `json:"base64"`
	} `json:"keys"`
	Samples []CryptoSample `json:"samples"`
}

// CryptoSample is one body another library encrypted.
type CryptoSample struct {
	Library   string `json:"library"`
	Note      string `json:"note"`
	Plaintext string `json:"plaintext"`
	KeyID     string `json:"keyId"`
	Key       string `json:"key"` // the name of its key in Keys
	Body      []byte `json:"body"`
}

// LoadCrypto reads crypto-interop.json from the module's testdata.
func LoadCrypto(t testing.TB) Crypto {
	t.Helper()
	raw, err := os.ReadFile(Path(t, "crypto-interop.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f Crypto
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatalf("crypto-interop.json: %v", err)
	}
	return f
}

// Path is the family's fixture file name in the repository's testdata/fixtures,
// found from the test's directory upwards.
func Path(t testing.TB, name string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		// The repository's root holds testdata/fixtures; a nested module's
		// go.mod (codec/protobuf's) is not the root.
		if _, err := os.Stat(filepath.Join(dir, "testdata", "fixtures")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("codectest: no testdata/fixtures above the test's directory")
		}
		dir = parent
	}
	return filepath.Join(dir, "testdata", "fixtures", name)
}

// Of returns the samples of one format, failing t when there are none.
func (f Fixtures) Of(t testing.TB, format string) []Sample {
	t.Helper()
	var out []Sample
	for _, s := range f.Samples {
		if s.Format == format {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		t.Fatalf("codec-interop.json has no %s sample", format)
	}
	return out
}

// By is the sample of producer among samples, failing t when there is none.
func By(t testing.TB, samples []Sample, producer string) Sample {
	t.Helper()
	for _, s := range samples {
		if s.Producer == producer {
			return s
		}
	}
	t.Fatalf("no sample by %s", producer)
	return Sample{}
}

// Same reports whether got and want are the same value once both are
// written as JSON and read back: 4250 is 4250 whether an int or a float64,
// a map's keys and a json.RawMessage's (a Sample's Expected) compare in any
// order, and "4250" is not 4250.
func Same(t testing.TB, got, want any) bool {
	t.Helper()
	return reflect.DeepEqual(asJSON(t, got), asJSON(t, want))
}

func asJSON(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%#v: %v", v, err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber() // numbers compare as written, not rounded to a float64
	var out any
	if err := d.Decode(&out); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return out
}

// Package codecinterop reads the family's codec fixtures for tests:
// testdata/fixtures/codec-interop.json, the bodies the Java and Go AceMQ
// libraries write in each format with the value each decodes to.
package codecinterop

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Sample is one body of the fixtures.
type Sample struct {
	Format      string         `json:"format"` // "yaml", "toml", "xml", ...
	Producer    string         `json:"producer"`
	ContentType string         `json:"content_type"`
	Body        []byte         `json:"body_base64"`
	Expected    map[string]any `json:"expected"`
}

// Samples are the fixtures' samples of format, failing t when there are
// none.
func Samples(t testing.TB, format string) []Sample {
	t.Helper()
	data, err := os.ReadFile(Path(t))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Samples []Sample `json:"samples"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	var of []Sample
	for _, s := range f.Samples {
		if s.Format == format {
			of = append(of, s)
		}
	}
	if len(of) == 0 {
		t.Fatalf("the fixtures have no %s sample", format)
	}
	return of
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

// Path is the fixture file's, found from the working directory up to the
// module's root.
func Path(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "testdata", "fixtures", "codec-interop.json")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Same reports whether got and want are the same value once both are
// written as JSON (4250 is 4250 whether an int or a float64).
func Same(t testing.TB, got, want any) bool {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatalf("%#v: %v", got, err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	return string(g) == string(w)
}

package toml_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	gotoml "github.com/pelletier/go-toml/v2"

	"github.com/acemq-go/acemq/codec/toml"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/testing/codectest"
)

// order is the fixtures' message.
type order struct {
	OrderID    string   `toml:"orderId"`
	Customer   string   `toml:"customer"`
	TotalCents int64    `toml:"totalCents"`
	Currency   string   `toml:"currency"`
	Items      []string `toml:"items"`
}

var want = order{OrderID: "o-1", Customer: "Ana Söderström", TotalCents: 4250, Currency: "EUR", Items: []string{"widget", "gasket"}}

// The content types of section 8: parameters and case ignored, no claim on
// a message without one.
func TestContentTypes(t *testing.T) {
	if got := toml.Codec.ContentType(); got != contract.ContentTypeTOML {
		t.Errorf("ContentType = %q", got)
	}
	for ct, reads := range map[string]bool{
		"application/toml": true, "text/toml": true, "application/vnd.acme.order+toml": true,
		"Application/TOML; charset=utf-8": true, "TEXT/TOML": true,
		"": false, "application/x-toml": false, "application/json": false, "text/plain": false, "application/yaml": false,
	} {
		if got := toml.Codec.Reads(ct); got != reads {
			t.Errorf("Reads(%q) = %v, want %v", ct, got, reads)
		}
	}
}

// Every TOML sample, Java's and Go's, decodes to its expected value, into a
// struct and into a map.
func TestFixtures(t *testing.T) {
	for _, s := range codectest.Load(t).Of(t, "toml") {
		t.Run(s.Producer, func(t *testing.T) {
			var o order
			if err := toml.Codec.Unmarshal(s.ContentType, s.Body, &o); err != nil || !codectest.Same(t, o, want) {
				t.Errorf("into a struct: %+v, %v", o, err)
			}
			var m map[string]any
			if err := toml.Codec.Unmarshal(s.ContentType, s.Body, &m); err != nil || !codectest.Same(t, m, s.Expected) {
				t.Errorf("into a map: %v, %v; want %s", m, err, s.Expected)
			}
		})
	}
}

// What Marshal writes: Java's bytes exactly (go-toml quotes strings as
// Jackson does, in single quotes). The Go peer's BurntSushi/toml writes
// double quotes, so its bytes differ, in the quotes only.
func TestMarshalWritesJavasBytes(t *testing.T) {
	samples := codectest.Load(t).Of(t, "toml")
	java, goPeer := codectest.By(t, samples, "java"), codectest.By(t, samples, "go")
	got, err := toml.Codec.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, java.Body) {
		t.Errorf("Marshal wrote\n%s\nJava wrote\n%s", got, java.Body)
	}
	if bytes.Equal(got, goPeer.Body) {
		t.Error("Marshal wrote the Go peer's bytes too: the fixtures' TOML differ, so one of them has changed")
	}
	if strings.ReplaceAll(string(goPeer.Body), `"`, "'") != string(java.Body) {
		t.Error("the Go peer's TOML differs from Java's by more than quote style")
	}
	// A map's keys are sorted; a string with a single quote in it is
	// written in double quotes.
	m, err := toml.Codec.Marshal(map[string]any{"b": "it's", "a": int64(1)})
	if err != nil || string(m) != "a = 1\nb = \"it's\"\n" {
		t.Errorf("a map: %q, %v", m, err)
	}
}

func TestRoundTrip(t *testing.T) {
	b, err := toml.Codec.Marshal(&want)
	if err != nil {
		t.Fatal(err)
	}
	var o order
	if err := toml.Codec.Unmarshal(contract.ContentTypeTOML, b, &o); err != nil || !codectest.Same(t, o, want) {
		t.Errorf("%+v, %v", o, err)
	}
}

// Errors say where the body is wrong, and are matchable.
func TestUnmarshalErrors(t *testing.T) {
	var o order
	err := toml.Codec.Unmarshal(contract.ContentTypeTOML, []byte("orderId = 'o-1'\ntotalCents = = 4\n"), &o)
	var de *gotoml.DecodeError
	if !errors.As(err, &de) {
		t.Errorf("error %v is not a *toml.DecodeError", err)
	}
	if want := "acemq: TOML codec: line 2, column 14: toml: "; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want it to start %q", err, want)
	}
	// A key given twice is not TOML.
	if err := toml.Codec.Unmarshal(contract.ContentTypeTOML, []byte("a = 1\na = 2\n"), &o); err == nil {
		t.Error("a key given twice decoded")
	}
	// A value of the wrong type.
	if err := toml.Codec.Unmarshal(contract.ContentTypeTOML, []byte("totalCents = 'many'\n"), &o); err == nil || !strings.HasPrefix(err.Error(), "acemq: TOML codec: ") {
		t.Errorf("a string for an int: %v", err)
	}
	// An empty body is an empty table.
	var m map[string]any
	if err := toml.Codec.Unmarshal(contract.ContentTypeTOML, nil, &m); err != nil || len(m) != 0 {
		t.Errorf("an empty body: %v, %v; want an empty table", m, err)
	}
}

func TestMarshalError(t *testing.T) {
	// A TOML document is a table.
	_, err := toml.Codec.Marshal([]string{"a"})
	if err == nil || !strings.HasPrefix(err.Error(), "acemq: TOML codec: ") {
		t.Errorf("a slice: %v, want a TOML codec error", err)
	}
}

// FuzzUnmarshal: no body panics the decoder, into a struct or a map, and a
// map it reads is written again.
func FuzzUnmarshal(f *testing.F) {
	for _, s := range codectest.Load(f).Of(f, "toml") {
		f.Add(s.Body)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var o order
		_ = toml.Codec.Unmarshal(contract.ContentTypeTOML, body, &o)
		var m map[string]any
		if toml.Codec.Unmarshal(contract.ContentTypeTOML, body, &m) == nil {
			if _, err := toml.Codec.Marshal(m); err != nil {
				t.Errorf("%q read as %v, which does not write: %v", body, m, err)
			}
		}
	})
}

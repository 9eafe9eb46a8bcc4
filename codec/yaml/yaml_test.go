package yaml_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	goyaml "go.yaml.in/yaml/v3"

	"github.com/acemq-go/acemq/codec/yaml"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/testing/codectest"
)

// order is the fixtures' message.
type order struct {
	OrderID    string   `yaml:"orderId"`
	Customer   string   `yaml:"customer"`
	TotalCents int64    `yaml:"totalCents"`
	Currency   string   `yaml:"currency"`
	Items      []string `yaml:"items"`
}

var want = order{OrderID: "o-1", Customer: "Ana Söderström", TotalCents: 4250, Currency: "EUR", Items: []string{"widget", "gasket"}}

// The content types of section 8: parameters and case ignored, no claim on
// a message without one.
func TestContentTypes(t *testing.T) {
	if got := yaml.Codec.ContentType(); got != contract.ContentTypeYAML {
		t.Errorf("ContentType = %q", got)
	}
	for ct, reads := range map[string]bool{
		"application/yaml": true, "application/x-yaml": true, "text/yaml": true, "text/x-yaml": true,
		"application/vnd.acme.order+yaml": true, "APPLICATION/YAML; charset=utf-8": true, "Text/X-YAML": true,
		"": false, "application/json": false, "text/plain": false, "application/toml": false, "application/yaml-ish": false,
	} {
		if got := yaml.Codec.Reads(ct); got != reads {
			t.Errorf("Reads(%q) = %v, want %v", ct, got, reads)
		}
	}
}

// Every YAML sample, Java's and Go's, decodes to its expected value, into a
// struct and into a map.
func TestFixtures(t *testing.T) {
	for _, s := range codectest.Load(t).Of(t, "yaml") {
		t.Run(s.Producer, func(t *testing.T) {
			var o order
			if err := yaml.Codec.Unmarshal(s.ContentType, s.Body, &o); err != nil || !codectest.Same(t, o, want) {
				t.Errorf("into a struct: %+v, %v", o, err)
			}
			var m map[string]any
			if err := yaml.Codec.Unmarshal(s.ContentType, s.Body, &m); err != nil || !codectest.Same(t, m, s.Expected) {
				t.Errorf("into a map: %v, %v; want %s", m, err, s.Expected)
			}
		})
	}
}

// What Marshal writes: Java's bytes exactly, a struct and a map alike (a map
// in its keys' order). Go's yaml.Marshal (the Go peer's) indents a list four
// spaces, so its bytes differ, in the indentation only.
func TestMarshalWritesJavasBytes(t *testing.T) {
	samples := codectest.Load(t).Of(t, "yaml")
	java, goPeer := codectest.By(t, samples, "java"), codectest.By(t, samples, "go")
	got, err := yaml.Codec.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, java.Body) {
		t.Errorf("Marshal wrote\n%s\nJava wrote\n%s", got, java.Body)
	}
	if bytes.Equal(got, goPeer.Body) {
		t.Error("Marshal wrote the Go peer's bytes too: the fixtures' YAML differ, so one of them has changed")
	}
	if strings.ReplaceAll(string(goPeer.Body), "    - ", "- ") != string(java.Body) {
		t.Error("the Go peer's YAML differs from Java's by more than list indentation")
	}
	// A map's keys are sorted.
	m, err := yaml.Codec.Marshal(map[string]any{"b": []string{"x"}, "a": 1})
	if err != nil || string(m) != "a: 1\nb:\n- x\n" {
		t.Errorf("a map: %q, %v", m, err)
	}
}

func TestRoundTrip(t *testing.T) {
	b, err := yaml.Codec.Marshal(&want)
	if err != nil {
		t.Fatal(err)
	}
	var o order
	if err := yaml.Codec.Unmarshal(contract.ContentTypeYAML, b, &o); err != nil || !codectest.Same(t, o, want) {
		t.Errorf("%+v, %v", o, err)
	}
}

// Errors say what is wrong with the body, and are matchable.
func TestUnmarshalErrors(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		is         error
		text       string
	}{
		{"empty", "", yaml.ErrNoDocument, "acemq: YAML codec: the body holds no YAML document"},
		{"only a comment", "# nothing\n", yaml.ErrNoDocument, "acemq: YAML codec: the body holds no YAML document"},
		{"two documents", "orderId: o-1\n---\norderId: o-2\n", yaml.ErrManyDocuments, "acemq: YAML codec: the body holds more than one YAML document"},
		{"not YAML", "orderId: [o-1\n", nil, "acemq: YAML codec: yaml: line 1: did not find expected ',' or ']'"},
		{"a second document that is not YAML", "orderId: o-1\n---\n[\n", nil, "acemq: YAML codec: yaml: line 3: did not find expected node content"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var o order
			err := yaml.Codec.Unmarshal(contract.ContentTypeYAML, []byte(tt.body), &o)
			if err == nil || err.Error() != tt.text || tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v\nwant  %s (matching %v)", err, tt.text, tt.is)
			}
		})
	}
	// A value of the wrong type is a *yaml.TypeError of go.yaml.in/yaml/v3.
	var o order
	err := yaml.Codec.Unmarshal(contract.ContentTypeYAML, []byte("totalCents: many\n"), &o)
	var te *goyaml.TypeError
	if !errors.As(err, &te) {
		t.Errorf("error %v is not a *yaml.TypeError", err)
	}
	// Aliases that would expand without bound are refused (go.yaml.in's
	// limit), not expanded.
	bomb := "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
	var m map[string]any
	if err := yaml.Codec.Unmarshal(contract.ContentTypeYAML, []byte(bomb), &m); err == nil || !strings.Contains(err.Error(), "excessive aliasing") {
		t.Errorf("an alias bomb: %v, want it refused", err)
	}
}

func TestMarshalError(t *testing.T) {
	_, err := yaml.Codec.Marshal(map[string]any{"f": func() {}})
	if err == nil || !strings.HasPrefix(err.Error(), "acemq: YAML codec: ") {
		t.Errorf("a func: %v, want a YAML codec error", err)
	}
}

// FuzzUnmarshal: no body panics the decoder, into a struct or a map, and a
// map it reads is written again.
func FuzzUnmarshal(f *testing.F) {
	for _, s := range codectest.Load(f).Of(f, "yaml") {
		f.Add(s.Body)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var o order
		_ = yaml.Codec.Unmarshal(contract.ContentTypeYAML, body, &o)
		var m map[string]any
		if yaml.Codec.Unmarshal(contract.ContentTypeYAML, body, &m) == nil {
			if _, err := yaml.Codec.Marshal(m); err != nil {
				t.Errorf("%q read as %v, which does not write: %v", body, m, err)
			}
		}
	})
}

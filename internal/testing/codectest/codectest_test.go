package codectest

import (
	"encoding/json"
	"testing"
)

// Same compares values as JSON: a fixture's Expected against what a codec
// decoded, whatever the key order and number type, and no looser.
func TestSame(t *testing.T) {
	expected := json.RawMessage(`{"totalCents": 4250, "customer": "Ana S\u00f6derstr\u00f6m", "items": ["a", "b"]}`)
	for _, tt := range []struct {
		name      string
		got, want any
		same      bool
	}{
		{"a map against the fixture's JSON", map[string]any{"customer": "Ana Söderström", "items": []any{"a", "b"}, "totalCents": 4250}, expected, true},
		{"a float64 for an int", map[string]any{"customer": "Ana Söderström", "items": []string{"a", "b"}, "totalCents": 4250.0}, expected, true},
		{"text for a number", map[string]any{"customer": "Ana Söderström", "items": []any{"a", "b"}, "totalCents": "4250"}, expected, false},
		{"a key missing", map[string]any{"customer": "Ana Söderström", "items": []any{"a", "b"}}, expected, false},
		{"items in another order", map[string]any{"customer": "Ana Söderström", "items": []any{"b", "a"}, "totalCents": 4250}, expected, false},
		{"numbers past a float64's precision", int64(9007199254740993), int64(9007199254740992), false},
	} {
		if got := Same(t, tt.got, tt.want); got != tt.same {
			t.Errorf("%s: Same = %v, want %v", tt.name, got, tt.same)
		}
	}
}

func TestFixturesLoad(t *testing.T) {
	f := Load(t)
	s := By(t, f.Of(t, "yaml"), "java")
	if len(s.Body) == 0 || s.ContentType == "" || !json.Valid(s.Expected) || f.AvroSchema == "" {
		t.Errorf("the Java YAML sample read as %+v; the Avro schema %q", s, f.AvroSchema)
	}
}

package mediatype

import "testing"

func TestMatches(t *testing.T) {
	types := []string{"application/yaml", "text/yaml"}
	for ct, want := range map[string]bool{
		"application/yaml":                   true,
		"Application/YAML":                   true,
		"application/yaml; charset=utf-8":    true,
		"application/yaml; charset":          true, // a bad parameter is ignored
		" text/yaml ":                        true,
		"application/vnd.acme.order+yaml":    true,
		"APPLICATION/VND.ACME+YAML; V=1":     true,
		"application/+yaml":                  false, // nothing before the suffix
		"application/yamlx":                  false,
		"application/json":                   false,
		"":                                   false,
		"yaml":                               false,
		"/+yaml":                             false,
		"application/yaml; charset=utf-8; x": true,
	} {
		if got := Matches(ct, types, "+yaml"); got != want {
			t.Errorf("Matches(%q) = %v, want %v", ct, got, want)
		}
	}
}

func TestReadable(t *testing.T) {
	got := Readable([]string{"application/yaml", "text/yaml"}, "+yaml")
	if want := "it reads application/yaml, text/yaml, */*+yaml; not a message without a content type"; got != want {
		t.Errorf("Readable = %q, want %q", got, want)
	}
}

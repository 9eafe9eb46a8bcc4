package harness

import (
	"encoding/json"
	"testing"
)

func TestPayloadIsBodySizeBytes(t *testing.T) {
	for _, seq := range []int{0, 7, 123456, 9_999_999_999} {
		body, err := json.Marshal(NewPayload(seq))
		if err != nil {
			t.Fatal(err)
		}
		if len(body) != BodySize {
			t.Errorf("message %d is %d bytes, want %d", seq, len(body), BodySize)
		}
	}
}

// Watermill's default marshaler refuses a header that is not a string, so
// the messages preloaded for it must carry strings only.
func TestWatermillPreloadHasStringHeadersOnly(t *testing.T) {
	p, err := watermillPublishing(3)
	if err != nil {
		t.Fatal(err)
	}
	if p.Headers[watermillUUIDHeader] != NewPayload(3).ID {
		t.Errorf("uuid header %v", p.Headers[watermillUUIDHeader])
	}
	for k, v := range p.Headers {
		if _, ok := v.(string); !ok {
			t.Errorf("header %s is %T", k, v)
		}
	}
}

func TestSlugKeepsEveryWord(t *testing.T) {
	for name, want := range map[string]string{
		"raw classic TTL queue":      "raw-classic-ttl-queue",
		"acemq+observers":            "acemq-observers",
		"rung kinds (quorum source)": "rung-kinds-quorum-source",
	} {
		if got := slug(name); got != want {
			t.Errorf("slug(%q) = %q, want %q", name, got, want)
		}
	}
}

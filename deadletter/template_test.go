package deadletter_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/acemq-go/acemq/deadletter"
)

func TestReasonTemplate(t *testing.T) {
	tests := []struct{ text, want string }{
		{"handler panicked: order 17: assignment to entry in nil map", "handler panicked: order <n>: assignment to entry in nil map"},
		{"exhausted 3 attempts: java.io.IOException: connection reset", "exhausted <n> attempts: java.io.IOException: connection reset"},
		{"could not be decoded: customer 550e8400-E29B-41d4-a716-446655440000 unknown", "could not be decoded: customer <uuid> unknown"},
		{"the handler rejected it: object 5f8d0d55b54764421b7156c3 missing", "the handler rejected it: object <hex> missing"},
		{"handler panicked: invalid memory address at 0xc000a1", "handler panicked: invalid memory address at <hex>"},
		{"the handler rejected it: sku ORD-X-17 at 10.0.3.7:8080", "the handler rejected it: sku ORD-X-<n> at <n>.<n>.<n>.<n>:<n>"},
		{"exceeded the maximum message age of 2m0s: slow", "exceeded the maximum message age of <n>m<n>s: slow"},
		// Words made of hex letters alone, and short ones, stay words.
		{"the handler rejected it: deadbeef cafe a1", "the handler rejected it: deadbeef cafe a<n>"},
		{"", ""},
	}
	for _, c := range tests {
		if got := deadletter.ReasonTemplate(c.text); got != c.want {
			t.Errorf("ReasonTemplate(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

// Sixteen panics of one bug, each naming its own order, id and request,
// are one group.
func TestReasonTemplateGroupsOneFailure(t *testing.T) {
	groups := map[string]int{}
	for i := range 16 {
		text := fmt.Sprintf("handler panicked: order o-%d (request %08x-1234-4abc-8def-%012x, trace %x): index out of range [%d] with length %d",
			1000+i*37, i*7919, i*104729, 0xabc0000+i*4099, i+3, i+2)
		groups[deadletter.ReasonTemplate(text)]++
	}
	if len(groups) != 1 {
		t.Errorf("16 texts of one failure make %d groups, want 1: %v", len(groups), groups)
	}
}

// The family's texts (CONTRACT.md section 20, as reason_test.go has them)
// for different failures stay apart: folding never merges two.
func TestReasonTemplateKeepsTheFamilysTextsApart(t *testing.T) {
	texts := []string{
		"exhausted 3 attempts: java.io.IOException: connection reset",
		"exhausted 3 attempts: connection reset",
		"gave up after 3 attempts: Timeout::Error",
		"exhausted 3 attempt(s): TimeoutError: timed out",
		"gave up after 3 attempt(s): timed out",
		"exceeded the maximum message age of PT2M: java.util.concurrent.TimeoutException: slow",
		"exceeded the maximum message age of 2m0s: slow",
		"gave up on a message older than 120.0 seconds: slow",
		"exceeded the maximum message age of 0:02:00: TimeoutError: slow",
		"gave up on a message older than 00:02:00: slow",
		"the handler reported an unprocessable message: com.acme.InvalidOrder: no sku",
		"the handler rejected it: no sku",
		"rejected by the handler: no sku",
		"the handler rejected it: InvalidOrder: no sku",
		"retrying cannot help: schema v9 unknown",
		"fatal error",
		"the handler parked it: needs a person",
		"could not be decoded: invalid character 'o' looking for beginning of value",
		"could not be decoded: unexpected token at 'order 9'",
		"could not decode as OrderCreated: 'o' is an invalid start of a value",
		"an interceptor refused it: tenant suspended",
		"handler panicked: runtime error: index out of range [3] with length 3",
		"the handler returned no decision",
	}
	seen := map[string]string{}
	for _, text := range texts {
		tmpl := deadletter.ReasonTemplate(text)
		if other, ok := seen[tmpl]; ok {
			t.Errorf("%q and %q fold to one template, %q", other, text, tmpl)
		}
		seen[tmpl] = text
	}
}

// A group is selected by the expression the console writes for it, with
// whatever its template holds.
func TestReasonTemplateExpression(t *testing.T) {
	for _, text := range []string{"handler panicked: order 17", `could not be decoded: unexpected token at 'order 9' "x" \ tab	é`, ""} {
		tmpl := deadletter.ReasonTemplate(text)
		m, err := deadletter.Compile("reasonTemplate == " + strconv.Quote(tmpl))
		if err != nil {
			t.Fatalf("the expression of %q: %v", tmpl, err)
		}
		for _, f := range []struct {
			fields deadletter.Fields
			want   bool
		}{{deadletter.Fields{ReasonTemplate: tmpl}, true}, {deadletter.Fields{ReasonTemplate: tmpl + "x"}, false}} {
			if got, err := m.MatchFields(f.fields); err != nil || got != f.want {
				t.Errorf("%s on %q = %v, %v; want %v", m, f.fields.ReasonTemplate, got, err, f.want)
			}
		}
	}
}

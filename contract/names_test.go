package contract_test

import (
	"slices"
	"testing"
	"time"

	"github.com/acemq-go/acemq/contract"
)

// The names table of CONTRACT.md section 1.
func TestNames(t *testing.T) {
	if contract.RetryExchange != "acemq.retry" || contract.DeadLetterExchange != "acemq.dlx" {
		t.Fatalf("exchanges are %q and %q, want acemq.retry and acemq.dlx", contract.RetryExchange, contract.DeadLetterExchange)
	}
	if got := contract.DeadLetterQueue("orders.new"); got != "orders.new.dlq" {
		t.Errorf("DeadLetterQueue = %q, want orders.new.dlq", got)
	}
	if got := contract.ParkedQueue("orders.new"); got != "orders.new.parked" {
		t.Errorf("ParkedQueue = %q, want orders.new.parked", got)
	}
}

// The rendering table of CONTRACT.md section 1, plus the edges of the rule.
func TestRenderDelay(t *testing.T) {
	tests := []struct {
		delay time.Duration
		want  string
	}{
		{500 * time.Millisecond, "0s"},
		{time.Second, "1s"},
		{1500 * time.Millisecond, "1s"},
		{30 * time.Second, "30s"},
		{60 * time.Second, "1m"},
		{90 * time.Second, "90s"},
		{160 * time.Second, "160s"},
		{300 * time.Second, "5m"},
		{3600 * time.Second, "1h"},
		{5400 * time.Second, "90m"},
		{7200 * time.Second, "2h"},
		{86400 * time.Second, "24h"},
		// the edges
		{0, "0s"},
		{-5 * time.Second, "0s"},
		{999 * time.Millisecond, "0s"},
		{59*time.Second + 999*time.Millisecond, "59s"},
		{48 * time.Hour, "48h"},
		{3660 * time.Second, "61m"},
		{3601 * time.Second, "3601s"},
	}
	for _, tt := range tests {
		if got := contract.RenderDelay(tt.delay); got != tt.want {
			t.Errorf("RenderDelay(%v) = %q, want %q", tt.delay, got, tt.want)
		}
		if got, want := contract.RungQueue("orders.new", tt.delay, contract.ContractRungs), "orders.new.retry."+tt.want; got != want {
			t.Errorf("RetryQueue(orders.new, %v) = %q, want %q", tt.delay, got, want)
		}
	}
}

// Both kinds of rung name read back, the source picked among the readings of
// an ambiguous name; Java's millisecond names count as rungs too.
func TestParseRungName(t *testing.T) {
	known := func(sources ...string) func(string) bool {
		return func(s string) bool { return slices.Contains(sources, s) }
	}
	tests := []struct {
		name     string
		isSource func(string) bool
		want     contract.RungName
		ok       bool
	}{
		{"orders.new.retry.40s", nil, contract.RungName{Source: "orders.new", Kind: contract.ContractRungs, Delay: "40s"}, true},
		{"orders.new.retry.quorum.40s", nil, contract.RungName{Source: "orders.new", Kind: contract.AtLeastOnceRungs, Delay: "40s"}, true},
		{"orders.new.retry.500ms", nil, contract.RungName{Source: "orders.new", Kind: contract.ContractRungs, Delay: "500ms"}, true},
		{"a.retry.1s.retry.2s", nil, contract.RungName{Source: "a.retry.1s", Kind: contract.ContractRungs, Delay: "2s"}, true},
		{"a.retry.1s.retry.2s", known("a.retry.1s"), contract.RungName{Source: "a.retry.1s", Kind: contract.ContractRungs, Delay: "2s"}, true},
		{"a.retry.quorum.retry.quorum.5m", known("a.retry.quorum"), contract.RungName{Source: "a.retry.quorum", Kind: contract.AtLeastOnceRungs, Delay: "5m"}, true},
		{"orders.new.retry.40s", known("other"), contract.RungName{}, false},
		{"orders.new.retry.later", nil, contract.RungName{}, false},
		{"orders.new.retry.quorum", nil, contract.RungName{}, false},
		{".retry.1s", nil, contract.RungName{}, false},
		{"orders.new.dlq", nil, contract.RungName{}, false},
	}
	for _, tt := range tests {
		got, ok := contract.ParseRungName(tt.name, tt.isSource)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseRungName(%q) = %+v, %t; want %+v, %t", tt.name, got, ok, tt.want, tt.ok)
		}
		if ok && got.String() != tt.name {
			t.Errorf("%+v.String() = %q, want %q", got, got.String(), tt.name)
		}
	}
}

package chaos

import (
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/contract"
)

// A run's row names what it ran and gives the checker's four counts.
func TestJepsenRow(t *testing.T) {
	rep := Report{Scenario: Failover, Faults: 2, Rate: 110, Rungs: contract.AtLeastOnceRungs, RungsDefault: true,
		RungQueues: []string{"retry.quorum.1s"}, Confirmed: 5000, Duplicates: 12, Recovered: 3,
		Unexpected: []string{"x"}, InDoubtAtHeal: []int{40, 10}, InDoubt: 42, SettledAfterHeal: 42,
		Recovery: []time.Duration{1234 * time.Millisecond, 10 * time.Second}, PubRecovery: []time.Duration{300 * time.Millisecond}}
	want := "| failover, at-least-once rungs (the default), 110/s | 2 | 5000 | 0 | 12 | 1 | 3 | 42, 42 | 10s / 10s | 300ms / 300ms |"
	if got := rep.JepsenRow(); got != want {
		t.Errorf("JepsenRow:\n got %s\nwant %s", got, want)
	}
	if n := strings.Count(JepsenHeader, "\n"); n != 2 || strings.Count(strings.SplitN(JepsenHeader, "\n", 2)[0], "|") != strings.Count(want, "|") {
		t.Errorf("the header's columns are not the row's:\n%s%s", JepsenHeader, want)
	}
}

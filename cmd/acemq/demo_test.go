package main

import (
	"encoding/json"
	"testing"

	"github.com/acemq-go/acemq/internal/brokertest"
)

// The demo on the test broker accounts for every order: for 50 orders, 40
// accepted (10 of them after retries), 5 dead-lettered, 5 parked, none lost.
func TestDemo(t *testing.T) {
	r := run(t, "", "demo", "--url", brokertest.URL(t), "--messages", "50", "--json")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var got demoSummary
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	want := demoSummary{Published: 50, Accepted: 40, RetriedInConsumer: 15, RetriedOnRungs: 15, DeadLettered: 5, Parked: 5}
	if got != want {
		t.Errorf("summary %+v, want %+v", got, want)
	}
}

func TestDemoNeedsAURL(t *testing.T) {
	if r := run(t, "", "demo"); r.code != exitFailure {
		t.Errorf("exit %d without --url, want %d", r.code, exitFailure)
	}
}

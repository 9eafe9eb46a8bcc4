package main

import (
	"encoding/json"
	"strings"
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

// Without --url the demo runs on memory:// and explains what happened.
func TestDemoOnMemory(t *testing.T) {
	r := run(t, "", "demo", "--messages", "20")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{
		"final: published 20, accepted 16, retried in consumer 6, retried on rungs 6, dead-lettered 2, parked 2, lost 0",
		"acemq.demo.orders.retry.1s and acemq.demo.orders.retry.2s",
		"Lost: 0.",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, r.stdout)
		}
	}
}

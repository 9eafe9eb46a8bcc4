package reachtest

import (
	"errors"
	"testing"
)

// A URL is probed once; its answer, error or not, stands for the binary.
func TestProbeAsksOnce(t *testing.T) {
	calls := 0
	down := errors.New("connection refused")
	probe := func(string) error { calls++; return down }
	for range 3 {
		if err := Probe("amqp://reachtest.invalid:1/", probe); !errors.Is(err, down) {
			t.Fatalf("Probe = %v, want the probe's error", err)
		}
	}
	if err := Probe("amqp://reachtest.invalid:2/", func(string) error { calls++; return nil }); err != nil {
		t.Errorf("another URL: %v", err)
	}
	if calls != 2 {
		t.Errorf("%d probes for two URLs asked three and one times", calls)
	}
}

func TestRedact(t *testing.T) {
	if got := Redact("amqp://guest:secret@localhost:5672/"); got != "amqp://guest:xxxxx@localhost:5672/" {
		t.Errorf("Redact = %q", got)
	}
}

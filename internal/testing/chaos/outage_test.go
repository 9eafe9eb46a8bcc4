package chaos

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
)

// TestChaosOutageShort is the outage scenario in seconds (a 4s outage,
// rungs of 1s and 2s, a 1s cool-down), with and without a circuit breaker,
// in the normal `make test`: with the breaker, nothing is dead-lettered
// because of the outage; either way nothing is lost.
func TestChaosOutageShort(t *testing.T) {
	url := brokertest.URL(t)
	short := OutageConfig{URL: url, Before: time.Second, Outage: 4 * time.Second, After: time.Second,
		Policy: "exponential(3, 1s, 2s).waitInBrokerFrom(1s)"}
	with, without := runOutages(t, short, acemq.CircuitBreaker{CoolDown: time.Second})
	if without.OutageDeadLettered == 0 {
		t.Errorf("without a breaker, the outage dead-lettered nothing: the run proved nothing")
	}
	if with.PausedAfter == 0 {
		t.Errorf("with a breaker, the consumer never paused")
	}
}

// runOutages runs cfg with breaker, then without one, printing both
// reports; it fails t on a loss, and on a dead letter the outage caused
// with the breaker.
func runOutages(t *testing.T, cfg OutageConfig, breaker acemq.CircuitBreaker) (with, without OutageReport) {
	cfg.Logf = t.Logf
	ctx := context.Background()
	if cfg.Broker == "" {
		cfg.Broker = "the test broker"
		if m := brokertest.ManagementURL(); m != "" {
			if v, err := brokerVersion(ctx, m); err == nil {
				cfg.Broker = v
			}
		}
	}
	for _, withBreaker := range []bool{true, false} {
		run := cfg
		run.Queue = brokertest.UniqueName(t, "acemq.outage")
		rep := &without
		if withBreaker {
			run.Breaker, rep = &breaker, &with
		}
		var err error
		*rep, err = RunOutage(ctx, run)
		fmt.Print(rep.String())
		if err != nil {
			t.Fatal(err)
		}
		if rep.Published == 0 {
			t.Fatal("nothing was published: the run proved nothing")
		}
		if rep.Lost != 0 {
			t.Errorf("%d lost (breaker %v)", rep.Lost, withBreaker)
		}
	}
	if with.OutageDeadLettered != 0 {
		t.Errorf("with a breaker, %d dead-lettered because of the outage", with.OutageDeadLettered)
	}
	return with, without
}

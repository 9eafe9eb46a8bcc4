package harness

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

func TestRungQueuesAreBothKinds(t *testing.T) {
	got := rungQueues("q")
	if want := []string{"q.retry.1s", "q.retry.quorum.1s"}; !slices.Equal(got, want) {
		t.Errorf("rung queues %q, want %q", got, want)
	}
}

func TestTTLQueueArgsAreARungsOfEachKind(t *testing.T) {
	classic := TTLQueueArgs(contract.ContractRungs, "target", time.Second)
	if len(classic) != 3 || classic["x-message-ttl"] != int64(1000) || classic["x-dead-letter-routing-key"] != "target" {
		t.Errorf("classic TTL queue %v", classic)
	}
	quorum := TTLQueueArgs(contract.AtLeastOnceRungs, "target", time.Second)
	for k, v := range map[string]any{"x-queue-type": "quorum", "x-dead-letter-strategy": "at-least-once", "x-overflow": "reject-publish", "x-message-ttl": int64(1000)} {
		if quorum[k] != v {
			t.Errorf("quorum TTL queue %s = %v, want %v", k, quorum[k], v)
		}
	}
}

func TestTripCountsFromTheConfirm(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	started := map[string]time.Time{"a": at(0), "b": at(5)}
	confirmed := map[string]time.Time{"a": at(10), "b": at(12)}
	arrived := map[string]time.Time{"a": at(1013), "b": at(1012)}
	got, err := trip(arrived, confirmed, started, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got.Late)
	slices.Sort(got.Confirm)
	if want := []time.Duration{0, 3 * time.Millisecond}; !slices.Equal(got.Late, want) {
		t.Errorf("late %v, want %v", got.Late, want)
	}
	if want := []time.Duration{7 * time.Millisecond, 10 * time.Millisecond}; !slices.Equal(got.Confirm, want) {
		t.Errorf("confirm %v, want %v", got.Confirm, want)
	}
	delete(confirmed, "b")
	if _, err := trip(arrived, confirmed, started, time.Second); err == nil || !strings.Contains(err.Error(), "without a confirmed publish") {
		t.Errorf("a message home without a confirm: %v", err)
	}
}

func TestRungClockNotesConfirmedRepublishesToItsRung(t *testing.T) {
	var c RungClock
	end := func(rung, id string, republish bool, outcome contract.PublishOutcome) {
		c.PublishEnd(context.Background(), &acemq.PublishInfo{RoutingKey: rung, MessageID: "prop-" + id,
			Headers: transport.Table{contract.HeaderID: id}, Republish: republish}, acemq.PublishResult{Outcome: outcome})
	}
	end("q.retry.1s", "early", true, contract.PublishConfirmed) // before Arm
	c.Arm("q.retry.1s")
	end("q.retry.1s", "a", true, contract.PublishConfirmed)
	end("q.retry.1s", "b", false, contract.PublishConfirmed)       // the application's publish
	end("q.retry.1s", "c", true, contract.PublishRefused)          // not confirmed
	end("q.retry.quorum.1s", "d", true, contract.PublishConfirmed) // another rung
	got := c.Take()
	if len(got) != 1 || got["a"].IsZero() {
		t.Errorf("noted %v, want a alone", got)
	}
	end("q.retry.1s", "late", true, contract.PublishConfirmed) // after Take
	if got := c.Take(); len(got) != 0 {
		t.Errorf("noted %v after Take", got)
	}
}

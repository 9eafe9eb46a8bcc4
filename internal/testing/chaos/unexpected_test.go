package chaos

import (
	"context"
	"slices"
	"testing"

	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
)

// A message without a chaos number in a queue the run drains was never
// published by it: Jepsen's "unexpected", which the report counts and
// which fails the run, not a line in the log only.
func TestDrainCountsAMessageWithoutANumberAsUnexpected(t *testing.T) {
	ctx := context.Background()
	tr := memory.NewBroker().Connect()
	const q = "acemq.chaos.unexpected.dlq"
	if err := tr.DeclareQueue(ctx, transport.Queue{Name: q, Durable: true}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"chaos-8", "someone-else"} {
		c, err := tr.Publish(ctx, transport.Publishing{RoutingKey: q, Message: transport.Message{MessageID: id, Body: []byte("{}")}})
		if err == nil {
			err = c.Wait(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	r := &run{cfg: Config{Logf: t.Logf}, tr: tr}
	counts := map[int]int{}
	if err := r.drain(ctx, q, counts); err != nil {
		t.Fatal(err)
	}
	want := []string{`message id "someone-else" in ` + q}
	if counts[8] != 1 || len(counts) != 1 || !slices.Equal(r.unexpected, want) {
		t.Errorf("drained %v, unexpected %q; want 8 once and %q", counts, r.unexpected, want)
	}
	if rep := (Report{Unexpected: r.unexpected}); rep.OK() {
		t.Errorf("a report with an unexpected message is OK")
	}
}

package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
)

// A message whose handler timed out on its last attempt (WithHandlerTimeout)
// is recognisable in dlq show and dlq show --reasons: its reason says the
// handler timed out, and after what.
func TestDLQShowsAHandlerTimeout(t *testing.T) {
	url := "memory://cli-dlq-timeout"
	conn := deadLetters(t, url, "orders.new", 0)
	c, err := acemq.Consume(t.Context(), conn, "orders.new", func(ctx context.Context, _ acemq.Message[map[string]any]) acemq.Decision {
		<-ctx.Done() // hangs until its timeout cancels it
		return acemq.Accept()
	}, acemq.WithHandlerTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Close(context.Background()) })
	p, err := acemq.NewPublisher[map[string]any](conn, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Publish(t.Context(), "orders.new", map[string]any{"n": 1}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for c.Stats().DeadLettered != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("no dead letter within 10s: %+v", c.Stats())
		}
		time.Sleep(10 * time.Millisecond)
	}
	dlq := contract.DeadLetterQueue("orders.new")
	wantRun(t, run(t, "", "dlq", "show", dlq, "--reasons", "--url", url), 0, `COUNT  CLASS
1      exhausted

COUNT  CLASS      REASON
1      exhausted  exhausted 1 attempts: the handler timed out after 100ms
`)
	if r := run(t, "", "dlq", "show", dlq, "--url", url); r.code != 0 || !strings.Contains(r.stdout, "the handler timed out after 100ms") {
		t.Errorf("dlq show: exit %d, stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

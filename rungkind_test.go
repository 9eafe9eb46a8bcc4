package acemq_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/retry"
	"github.com/acemq-go/acemq/transport"
)

// rungKindPolicy puts its one broker wait, 1m, on a rung.
var rungKindPolicy = acemq.Fixed(3, time.Minute)

func failing(context.Context, acemq.Message[item]) acemq.Decision {
	return acemq.Retry(errors.New("not yet"))
}

// declareLadderOf declares q's ladder of kind on the broker, as a topology
// applied with that kind (or another consumer) leaves it.
func declareLadderOf(t *testing.T, conn *acemq.Conn, q string, kind contract.RungKind) {
	t.Helper()
	top := acemq.Topology{Queues: []acemq.QueueSpec{{Name: q, Retry: &rungKindPolicy, Rungs: kind}}}
	if err := top.Apply(context.Background(), conn); err != nil {
		t.Fatal(err)
	}
}

// A consumer that picks no kind, on a quorum queue, declares at-least-once
// rungs: quorum, dead-lettering at least once, refusing what they cannot
// hold (memory:// refuses a redeclaration that differs, as RabbitMQ does).
func TestConsumeDefaultsToAtLeastOnceRungsOnMemory(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	ctx := context.Background()
	if err := conn.Transport().DeclareQueue(ctx, transport.Queue{Name: "orders", Type: transport.Quorum, Durable: true}); err != nil {
		t.Fatal(err)
	}
	consume(t, conn, "orders", failing, acemq.WithPolicy(rungKindPolicy))

	ladder, err := retry.NewLadder("orders", rungKindPolicy, contract.AtLeastOnceRungs)
	if err != nil {
		t.Fatal(err)
	}
	rung := ladder.Rungs()[0].Declaration()
	if rung.Name != "orders.retry.quorum.1m" || rung.Type != transport.Quorum ||
		rung.Arguments["x-dead-letter-strategy"] != "at-least-once" || rung.Arguments["x-overflow"] != "reject-publish" {
		t.Fatalf("the at-least-once rung is %s", rung)
	}
	if err := conn.Transport().DeclareQueue(ctx, rung); err != nil {
		t.Errorf("the consumer's rung is not %s: %v", rung, err)
	}
	if _, err := conn.Transport().InspectQueue(ctx, "orders.retry.1m"); !errors.Is(err, acemq.ErrNotFound) {
		t.Errorf("the contract rung orders.retry.1m: %v, want none declared", err)
	}
}

// A consumer that picks no kind refuses to start beside the queue's ladder
// of the other kind, naming what it found and both ways out; it declares
// nothing.
func TestConsumeRefusesTheDefaultBesideContractRungsOnMemory(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	declareLadderOf(t, conn, "orders", contract.ContractRungs)

	c, err := acemq.Consume(context.Background(), conn, "orders", failing, acemq.WithPolicy(rungKindPolicy))
	if err == nil {
		_, _ = c.Close(context.Background())
		t.Fatal("Consume started a second ladder beside the contract rungs")
	}
	if !errors.Is(err, acemq.ErrOtherRungKind) {
		t.Errorf("err = %v, want ErrOtherRungKind", err)
	}
	for _, want := range []string{"orders.retry.1m (contract rungs)", "acemq.WithRungs(contract.ContractRungs)", "acemq.WithRungs(contract.AtLeastOnceRungs)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q:\n%v", want, err)
		}
	}
	if _, err := conn.Transport().InspectQueue(context.Background(), "orders.retry.quorum.1m"); !errors.Is(err, acemq.ErrNotFound) {
		t.Errorf("the refused consumer declared orders.retry.quorum.1m: %v", err)
	}
}

// A consumer that picks nothing starts on the ladder a topology applied
// with the default kind.
func TestConsumeStartsOnItsOwnKindOnMemory(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	declareLadderOf(t, conn, "orders", contract.AtLeastOnceRungs)
	consume(t, conn, "orders", failing, acemq.WithPolicy(rungKindPolicy))
}

// A consumer that chose its kind starts beside the other kind's ladder, and
// says so once, naming both ladders.
func TestConsumeWithAChosenKindWarnsOfTheOtherOnMemory(t *testing.T) {
	for _, tt := range []struct {
		existing, chosen contract.RungKind
		ladder, other    string
	}{
		{contract.ContractRungs, contract.AtLeastOnceRungs, "orders.retry.quorum.1m", "orders.retry.1m"},
		{contract.AtLeastOnceRungs, contract.ContractRungs, "orders.retry.1m", "orders.retry.quorum.1m"},
	} {
		t.Run(string(tt.chosen), func(t *testing.T) {
			b := acemqtest.NewBroker(t)
			logs := &logLines{}
			conn := b.Connect(t, acemq.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
			declareLadderOf(t, conn, "orders", tt.existing)
			consume(t, conn, "orders", failing, acemq.WithPolicy(rungKindPolicy), acemq.WithRungs(tt.chosen))
			if _, err := conn.Transport().InspectQueue(context.Background(), tt.ladder); err != nil {
				t.Errorf("the chosen ladder's %s: %v", tt.ladder, err)
			}
			got := logs.text()
			if n := strings.Count(got, "rungs of the other kind"); n != 1 {
				t.Fatalf("told %d times, want once:\n%s", n, got)
			}
			for _, want := range []string{"ladder=[" + tt.ladder + "]", "found=[" + tt.other + "]", "rungs=" + string(tt.chosen), "other=" + string(tt.existing)} {
				if !strings.Contains(got, want) {
					t.Errorf("the warning does not say %s:\n%s", want, got)
				}
			}
		})
	}
}

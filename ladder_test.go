package acemq

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/retry"
	"github.com/acemq-go/acemq/transport"
)

// mustLadder is source's ladder of contract rungs, the family's.
func mustLadder(t *testing.T, source string, p RetryPolicy) retry.Ladder {
	t.Helper()
	return mustLadderOf(t, source, p, contract.ContractRungs)
}

func mustLadderOf(t *testing.T, source string, p RetryPolicy, kind contract.RungKind) retry.Ladder {
	t.Helper()
	l, err := retry.NewLadder(source, p, kind)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// The rung of CONTRACT.md section 2: classic, durable, exactly three arguments.
func TestRungDeclaration(t *testing.T) {
	l := mustLadder(t, "orders.new", Exponential(6, 10*sec, 5*minute))
	want := []transport.Queue{
		{Name: "orders.new.retry.40s", Type: transport.Classic, Durable: true, Arguments: transport.Table{
			"x-message-ttl": int64(40000), "x-dead-letter-exchange": "acemq.retry", "x-dead-letter-routing-key": "orders.new"}},
		{Name: "orders.new.retry.80s", Type: transport.Classic, Durable: true, Arguments: transport.Table{
			"x-message-ttl": int64(80000), "x-dead-letter-exchange": "acemq.retry", "x-dead-letter-routing-key": "orders.new"}},
		{Name: "orders.new.retry.160s", Type: transport.Classic, Durable: true, Arguments: transport.Table{
			"x-message-ttl": int64(160000), "x-dead-letter-exchange": "acemq.retry", "x-dead-letter-routing-key": "orders.new"}},
	}
	rungs := l.Rungs()
	if len(rungs) != len(want) {
		t.Fatalf("rungs = %v, want %d", rungs, len(want))
	}
	for i, r := range rungs {
		got := r.Declaration()
		if got.String() != want[i].String() {
			t.Errorf("rung %d = %v, want %v", i, got, want[i])
		}
		// the TTL is an AMQP long, the type is sent as no argument at all
		if _, ok := got.Arguments["x-message-ttl"].(int64); !ok || len(got.WireArguments()) != 3 {
			t.Errorf("rung %d arguments %#v, want exactly three with an int64 TTL", i, got.WireArguments())
		}
		if got.Exclusive || got.AutoDelete {
			t.Errorf("rung %d is exclusive or auto-delete", i)
		}
	}
}

// An at-least-once rung: quorum, durable, its own name, the contract's three
// arguments and the two that make RabbitMQ dead-letter it at least once.
func TestAtLeastOnceRungDeclaration(t *testing.T) {
	l, err := retry.NewLadder("orders.new", Exponential(6, 10*sec, 5*minute), contract.AtLeastOnceRungs)
	if err != nil {
		t.Fatal(err)
	}
	if l.Kind() != contract.AtLeastOnceRungs {
		t.Errorf("Kind = %q", l.Kind())
	}
	wantNames := []string{"orders.new.retry.quorum.40s", "orders.new.retry.quorum.80s", "orders.new.retry.quorum.160s"}
	if !slices.Equal(l.Queues(), wantNames) {
		t.Fatalf("queues %q, want %q", l.Queues(), wantNames)
	}
	for i, r := range l.Rungs() {
		got := r.Declaration()
		want := transport.Queue{Name: wantNames[i], Type: transport.Quorum, Durable: true, Arguments: transport.Table{
			"x-message-ttl": r.Delay.Milliseconds(), "x-dead-letter-exchange": "acemq.retry", "x-dead-letter-routing-key": "orders.new",
			"x-dead-letter-strategy": "at-least-once", "x-overflow": "reject-publish"}}
		if got.String() != want.String() || r.Kind != contract.AtLeastOnceRungs {
			t.Errorf("rung %d = %v (%s), want %v", i, got, r.Kind, want)
		}
		if _, ok := got.Arguments["x-message-ttl"].(int64); !ok || got.WireArguments()["x-queue-type"] != "quorum" {
			t.Errorf("rung %d wire arguments %#v, want an int64 TTL and x-queue-type quorum", i, got.WireArguments())
		}
	}
	// The rest of the ladder is the contract's: the same exchange, binding
	// and dead-letter half, so the two kinds come home the same way.
	contract := mustLadder(t, "orders.new", Exponential(6, 10*sec, 5*minute))
	other := func(ds []transport.Declaration) (out []string) {
		for _, d := range ds {
			if q, ok := d.(transport.Queue); !ok || !strings.Contains(q.Name, ".retry.") {
				out = append(out, d.String())
			}
		}
		return out
	}
	if !slices.Equal(other(l.Declarations()), other(contract.Declarations())) {
		t.Errorf("besides the rungs, the declarations differ:\n%q\n%q", other(l.Declarations()), other(contract.Declarations()))
	}
}

func TestParseRungKind(t *testing.T) {
	for in, want := range map[string]contract.RungKind{"": contract.AtLeastOnceRungs, "contract": contract.ContractRungs, "at-least-once": contract.AtLeastOnceRungs} {
		if got, err := contract.ParseRungKind(in); err != nil || got != want {
			t.Errorf("ParseRungKind(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"quorum", "Contract", "at-most-once"} {
		if _, err := contract.ParseRungKind(bad); err == nil || !strings.Contains(err.Error(), `"`+bad+`"`) {
			t.Errorf("ParseRungKind(%q): %v", bad, err)
		}
	}
	if _, err := retry.NewLadder("q", Fixed(2, minute), "quorum"); err == nil || !strings.Contains(err.Error(), "retry ladder for q: unknown kind of rungs") {
		t.Errorf("NewRetryLadder with an unknown kind: %v", err)
	}
	if (retry.Ladder{}).Kind() != contract.AtLeastOnceRungs {
		t.Error("the zero ladder's kind is not at-least-once")
	}
}

// A rung's TTL keeps the milliseconds that its name truncates away.
func TestRungTTLIsWholeMilliseconds(t *testing.T) {
	l := mustLadder(t, "q", Fixed(2, 1500*ms+999*time.Microsecond).WaitInBrokerFrom(sec))
	r := l.Rungs()[0]
	if r.Queue != "q.retry.1s" || r.Declaration().Arguments["x-message-ttl"] != int64(1500) {
		t.Errorf("rung = %s with %v, want q.retry.1s with TTL 1500", r.Queue, r.Declaration().Arguments)
	}
}

func TestNewRetryLadderRefuses(t *testing.T) {
	if _, err := retry.NewLadder(" ", NoRetry(), contract.ContractRungs); err == nil || !strings.Contains(err.Error(), "blank") {
		t.Errorf("blank source: %v", err)
	}
	if _, err := retry.NewLadder("q", Fixed(0, sec), contract.ContractRungs); !errors.Is(err, ErrInvalidPolicy) || !strings.Contains(err.Error(), "retry ladder for q") {
		t.Errorf("invalid policy: %v", err)
	}
}

func TestLadder(t *testing.T) {
	tests := []struct {
		name   string
		policy RetryPolicy
		queues []string
		str    string
	}{
		{"reference", Exponential(6, 10*sec, 5*minute), []string{"orders.new.retry.40s", "orders.new.retry.80s", "orders.new.retry.160s"},
			"retry rungs for orders.new: orders.new.retry.40s, orders.new.retry.80s, orders.new.retry.160s"},
		{"capped waits share a rung", Exponential(6, 10*sec, minute), []string{"orders.new.retry.40s", "orders.new.retry.1m"},
			"retry rungs for orders.new: orders.new.retry.40s, orders.new.retry.1m"},
		{"fixed", Fixed(4, 30*sec), []string{"orders.new.retry.30s"}, "retry rungs for orders.new: orders.new.retry.30s"},
		{"all in the consumer", Fixed(4, 29*sec), []string{}, "no retry rungs for orders.new"},
		{"zero threshold", Exponential(6, 10*sec, 5*minute).WaitInBrokerFrom(0), []string{}, "no retry rungs for orders.new"},
		{"none", NoRetry(), []string{}, "no retry rungs for orders.new"},
		{"names de-duplicated, first wins", Exponential(3, 1500*ms, 1900*ms).WaitInBrokerFrom(sec), []string{"orders.new.retry.1s"},
			"retry rungs for orders.new: orders.new.retry.1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := mustLadder(t, "orders.new", tt.policy)
			if got := l.Queues(); !slices.Equal(got, tt.queues) {
				t.Errorf("Queues() = %v, want %v", got, tt.queues)
			}
			if l.Empty() != (len(tt.queues) == 0) {
				t.Errorf("Empty() = %v with %d rungs", l.Empty(), len(tt.queues))
			}
			if got := l.String(); got != tt.str {
				t.Errorf("String() = %q, want %q", got, tt.str)
			}
			if l.Source() != "orders.new" || l.Policy() != tt.policy {
				t.Errorf("Source, Policy = %q, %v", l.Source(), l.Policy())
			}
		})
	}
}

// rungFor: none when empty or the wait is the consumer's; else the shortest
// rung at least d; else the longest.
func TestRungFor(t *testing.T) {
	l := mustLadder(t, "q", Exponential(6, 10*sec, 5*minute)) // rungs 40s, 80s, 160s
	tests := []struct {
		d    time.Duration
		want string // "" for none
	}{
		{10 * sec, ""},
		{29 * sec, ""},
		{30 * sec, "q.retry.40s"},
		{40 * sec, "q.retry.40s"},
		{41 * sec, "q.retry.80s"},
		{80 * sec, "q.retry.80s"},
		{100 * sec, "q.retry.160s"},
		{160 * sec, "q.retry.160s"},
		{hr, "q.retry.160s"}, // past the end: the longest
	}
	for _, tt := range tests {
		r, ok := l.RungFor(tt.d)
		if ok != (tt.want != "") || r.Queue != tt.want {
			t.Errorf("RungFor(%v) = %q, %v; want %q", tt.d, r.Queue, ok, tt.want)
		}
	}
	empty := mustLadder(t, "q", Fixed(3, 10*sec))
	if r, ok := empty.RungFor(hr); ok {
		t.Errorf("empty ladder: RungFor(1h) = %v", r)
	}
	if !retry.WaitsOnRung(empty.Policy(), hr) {
		t.Errorf("WaitsInBroker(1h) = false under the default threshold")
	}
	unordered := mustLadder(t, "q", Fixed(2, 90*sec)) // a single rung
	if r, _ := unordered.RungFor(10 * minute); r.Queue != "q.retry.90s" {
		t.Errorf("RungFor past a single rung = %q", r.Queue)
	}
}

// The declaration order of CONTRACT.md section 4.
func TestLadderDeclarations(t *testing.T) {
	rung := func(name string, ttl int64) string { return rungDeclaration("orders.new", name, ttl) }
	deadLetterHalf := []string{
		"exchange acemq.dlx (direct, durable)",
		"queue orders.new.dlq (classic, durable)",
		`binding acemq.dlx -> orders.new.dlq under "orders.new.dlq"`,
		"queue orders.new.parked (classic, durable)",
		`binding acemq.dlx -> orders.new.parked under "orders.new.parked"`,
	}
	tests := []struct {
		name   string
		policy RetryPolicy
		want   []string
	}{
		{"with rungs", Exponential(6, 10*sec, 5*minute), append([]string{
			"exchange acemq.retry (direct, durable)",
			rung("orders.new.retry.40s", 40000), rung("orders.new.retry.80s", 80000), rung("orders.new.retry.160s", 160000),
			`binding acemq.retry -> orders.new under "orders.new"`,
		}, deadLetterHalf...)},
		{"without rungs: the dead-letter half only", Fixed(3, sec), deadLetterHalf},
		{"no retry: the dead-letter half only", NoRetry(), deadLetterHalf},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := mustLadder(t, "orders.new", tt.policy)
			var rec transport.Recorder
			if err := l.Declare(context.Background(), &rec); err != nil {
				t.Fatal(err)
			}
			if got := strs(rec.Declarations); !slices.Equal(got, tt.want) {
				t.Errorf("Declare sent\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
			if got := strs(l.Declarations()); !slices.Equal(got, tt.want) {
				t.Errorf("Declarations() differ from what Declare sends: %v", got)
			}
			rec = transport.Recorder{}
			if err := l.DeclareDeadLetters(context.Background(), &rec); err != nil {
				t.Fatal(err)
			}
			if got := strs(rec.Declarations); !slices.Equal(got, deadLetterHalf) {
				t.Errorf("DeclareDeadLetters sent %v", got)
			}
		})
	}
}

type failingDeclarer struct {
	transport.Recorder
	failOn string
}

func (f *failingDeclarer) DeclareQueue(ctx context.Context, q transport.Queue) error {
	if q.Name == f.failOn {
		return errors.New("PRECONDITION_FAILED")
	}
	return f.Recorder.DeclareQueue(ctx, q)
}

func TestLadderDeclareStopsAtTheFirstError(t *testing.T) {
	l := mustLadder(t, "orders.new", Exponential(6, 10*sec, 5*minute))
	d := &failingDeclarer{failOn: "orders.new.retry.80s"}
	err := l.Declare(context.Background(), d)
	if err == nil || !strings.Contains(err.Error(), "declaring queue orders.new.retry.80s") || !strings.Contains(err.Error(), "PRECONDITION_FAILED") {
		t.Fatalf("Declare = %v, want it to name the rung that failed", err)
	}
	if n := len(d.Declarations); n != 2 {
		t.Errorf("%d declarations were sent before the failure, want 2 (the exchange and the first rung)", n)
	}
}

// rungDeclaration is how a rung of source is declared, written out by hand
// from CONTRACT.md section 2.
func rungDeclaration(source, name string, ttl int64) string {
	return transport.Queue{Name: name, Type: transport.Classic, Durable: true, Arguments: transport.Table{
		"x-message-ttl": ttl, "x-dead-letter-exchange": "acemq.retry", "x-dead-letter-routing-key": source}}.String()
}

func strs[T interface{ String() string }](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.String()
	}
	return out
}

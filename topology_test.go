package acemq

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

func ptr[T any](v T) *T { return &v }

// The reference topology of CONTRACT.md section 5, as the other libraries
// declare it for orders.new with exponential(6, 10s, 5m).
func TestReferenceTopology(t *testing.T) {
	top := Topology{
		Exchanges: []ExchangeSpec{{Name: "orders", Type: transport.Topic}},
		Queues: []QueueSpec{{
			Name: "orders.new", DeadLetter: true, Retry: ptr(Exponential(6, 10*sec, 5*minute)), Rungs: contract.ContractRungs,
			Bindings: []BindingSpec{{Exchange: "orders", RoutingKey: "order.*"}},
		}},
	}
	rung := func(name string, ttl int64) string { return rungDeclaration("orders.new", name, ttl) }
	want := []string{
		"exchange orders (topic, durable)",
		"exchange acemq.dlx (direct, durable)",
		"exchange acemq.retry (direct, durable)",
		`queue orders.new (quorum, durable) {x-dead-letter-exchange: "acemq.dlx", x-dead-letter-routing-key: "orders.new.dlq"}`,
		"queue orders.new.dlq (classic, durable)",
		"queue orders.new.parked (classic, durable)",
		rung("orders.new.retry.40s", 40000),
		rung("orders.new.retry.80s", 80000),
		rung("orders.new.retry.160s", 160000),
		`binding orders -> orders.new under "order.*"`,
		`binding acemq.dlx -> orders.new.dlq under "orders.new.dlq"`,
		`binding acemq.dlx -> orders.new.parked under "orders.new.parked"`,
		`binding acemq.retry -> orders.new under "orders.new"`,
	}
	plan, err := top.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if got := strs(plan); !slices.Equal(got, want) {
		t.Errorf("Plan() =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	// the quorum type goes on the wire as x-queue-type
	if args := plan[3].(transport.Queue).WireArguments(); args["x-queue-type"] != "quorum" || len(args) != 3 {
		t.Errorf("orders.new wire arguments = %v", args)
	}
	// Apply sends exactly the plan.
	f := newFake()
	if err := top.Apply(context.Background(), f.conn()); err != nil {
		t.Fatal(err)
	}
	if got := strs(f.Declarations); !slices.Equal(got, want) {
		t.Errorf("Apply sent %v, want the plan", got)
	}
}

// Queue type defaults of CONTRACT.md section 5.
func TestQueueTypeDefaults(t *testing.T) {
	tests := []struct {
		spec QueueSpec
		want transport.QueueType
	}{
		{QueueSpec{Name: "q"}, transport.Quorum},
		{QueueSpec{Name: "q", Exclusive: true}, transport.Classic},
		{QueueSpec{Name: "q", AutoDelete: true}, transport.Classic},
		{QueueSpec{Name: "q", Transient: true}, transport.Classic},
		{QueueSpec{Name: "q", Type: transport.Classic}, transport.Classic},
		{QueueSpec{Name: "q", Type: transport.Stream}, transport.Stream},
	}
	for _, tt := range tests {
		plan, err := Topology{Queues: []QueueSpec{tt.spec}}.Plan()
		if err != nil {
			t.Fatalf("%+v: %v", tt.spec, err)
		}
		q := plan[0].(transport.Queue)
		if q.Type != tt.want || q.Durable == tt.spec.Transient {
			t.Errorf("%+v declared as %v, want %s", tt.spec, q, tt.want)
		}
		_, hasType := q.WireArguments()["x-queue-type"]
		if hasType == (tt.want == transport.Classic) {
			t.Errorf("%+v: wire arguments %v; classic is sent as no x-queue-type at all", tt.spec, q.WireArguments())
		}
	}
}

func TestRenamedDeadLetterExchange(t *testing.T) {
	top := Topology{
		DeadLetterExchange: "shop.dlx",
		Queues: []QueueSpec{
			{Name: "a", DeadLetter: true},
			{Name: "b", DeadLetter: true, Retry: ptr(Fixed(3, minute))},
		},
	}
	plan, err := top.Plan()
	if err != nil {
		t.Fatal(err)
	}
	got := strs(plan)
	for _, want := range []string{
		`queue a (quorum, durable) {x-dead-letter-exchange: "shop.dlx", x-dead-letter-routing-key: "a.dlq"}`,
		"exchange shop.dlx (direct, durable)",
		`binding shop.dlx -> a.dlq under "a.dlq"`,
		`binding shop.dlx -> b.dlq under "b.dlq"`,
		// the ladder's consumers always set aside through acemq.dlx
		"exchange acemq.dlx (direct, durable)",
		`binding acemq.dlx -> b.dlq under "b.dlq"`,
		`binding acemq.retry -> b under "b"`,
	} {
		if !slices.Contains(got, want) {
			t.Errorf("plan lacks %q:\n  %s", want, strings.Join(got, "\n  "))
		}
	}
	// b.dlq is needed by both halves and declared once
	count := 0
	for _, s := range got {
		if s == "queue b.dlq (classic, durable)" {
			count++
		}
	}
	if count != 1 {
		t.Errorf("b.dlq declared %d times", count)
	}
}

func TestPlanOrdersKinds(t *testing.T) {
	top := Topology{
		Exchanges: []ExchangeSpec{{Name: "x", Type: transport.Fanout}, {Name: "y", Type: transport.Direct, Transient: true}},
		Queues: []QueueSpec{
			{Name: "q1", Bindings: []BindingSpec{{Exchange: "y", RoutingKey: "k"}, {Exchange: "amq.topic", RoutingKey: "#"}}},
			{Name: "q2", Type: transport.Classic, Arguments: transport.Table{"x-max-length": int64(10)}, Bindings: []BindingSpec{{Exchange: "x"}}},
		},
	}
	plan, err := top.Plan()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"exchange x (fanout, durable)",
		"exchange y (direct, transient)",
		"queue q1 (quorum, durable)",
		"queue q2 (classic, durable) {x-max-length: 10}",
		`binding y -> q1 under "k"`,
		`binding amq.topic -> q1 under "#"`,
		`binding x -> q2 under ""`,
	}
	if got := strs(plan); !slices.Equal(got, want) {
		t.Errorf("Plan() =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestValidateTopology(t *testing.T) {
	tests := []struct {
		name string
		top  Topology
		want []string // every problem, in order
	}{
		{"valid", Topology{Queues: []QueueSpec{{Name: "q"}}}, nil},
		{"empty is valid", Topology{}, nil},
		{"blank names", Topology{
			Exchanges: []ExchangeSpec{{Name: "", Type: transport.Topic}},
			Queues:    []QueueSpec{{Name: " "}},
		}, []string{
			`exchange 1 (""): the name is blank`,
			`queue 1 (" "): the name is blank`,
		}},
		{"duplicate names", Topology{
			Exchanges: []ExchangeSpec{{Name: "x", Type: transport.Topic}, {Name: "x", Type: transport.Topic}},
			Queues:    []QueueSpec{{Name: "q"}, {Name: "q", Type: transport.Classic}},
		}, []string{
			`exchange 2 ("x"): the name is listed twice`,
			`queue 2 ("q"): the name is listed twice`,
		}},
		{"exchange types", Topology{Exchanges: []ExchangeSpec{{Name: "x"}, {Name: "y", Type: "x-delayed-message"}}}, []string{
			`exchange 1 ("x"): the type is missing; it must be direct, fanout, topic or headers`,
			`exchange 2 ("y"): the type "x-delayed-message" is not one of direct, fanout, topic or headers`,
		}},
		{"reserved and long names", Topology{
			Exchanges: []ExchangeSpec{{Name: "amq.mine", Type: transport.Topic}},
			Queues:    []QueueSpec{{Name: strings.Repeat("q", 256)}},
		}, []string{
			`exchange 1 ("amq.mine"): names starting with amq. are reserved by RabbitMQ`,
			`queue 1 ("` + strings.Repeat("q", 256) + `"): the name is longer than 255 bytes`,
		}},
		{"generated names too long", Topology{Queues: []QueueSpec{{Name: strings.Repeat("q", 250), DeadLetter: true}}}, []string{
			`queue 1 ("` + strings.Repeat("q", 250) + `"): the queue name "` + strings.Repeat("q", 250) + `.parked" is longer than 255 bytes`,
		}},
		{"binding to something undeclared", Topology{Queues: []QueueSpec{{Name: "q", Bindings: []BindingSpec{
			{Exchange: "nowhere", RoutingKey: "k"}, {Exchange: ""}, {Exchange: "amq.direct"}, {Exchange: "amq.direct"},
		}}}}, []string{
			`queue 1 ("q"), binding 1: the exchange "nowhere" is not declared in this topology`,
			`queue 1 ("q"), binding 2: the exchange is blank; the default exchange routes by queue name and cannot be bound`,
			`queue 1 ("q"), binding 4: the binding to "amq.direct" under "" is listed twice`,
		}},
		{"quorum on an exclusive queue", Topology{Queues: []QueueSpec{
			{Name: "a", Type: transport.Quorum, Exclusive: true},
			{Name: "b", Type: transport.Quorum, AutoDelete: true, Transient: true},
			{Name: "c", Type: transport.Stream, Exclusive: true},
		}}, []string{
			`queue 1 ("a"): a quorum queue cannot be exclusive; make it classic or drop exclusive`,
			`queue 2 ("b"): a quorum queue cannot be auto-delete; make it classic or drop auto-delete`,
			`queue 2 ("b"): a quorum queue cannot be transient; make it classic or drop transient`,
			`queue 3 ("c"): a stream queue cannot be exclusive; make it classic or drop exclusive`,
		}},
		{"queue types", Topology{Queues: []QueueSpec{
			{Name: "a", Type: "lazy"},
			{Name: "b", Arguments: transport.Table{"x-queue-type": "classic"}},
			{Name: "c", Type: transport.Stream, DeadLetter: true},
		}}, []string{
			`queue 1 ("a"): the type "lazy" is not one of classic, quorum or stream`,
			`queue 2 ("b"): set the queue type with type, not the x-queue-type argument`,
			`queue 3 ("c"): a stream cannot dead-letter or retry messages; use a quorum or classic queue`,
		}},
		{"conflicting dead-letter arguments", Topology{Queues: []QueueSpec{{Name: "q", DeadLetter: true, Arguments: transport.Table{
			"x-dead-letter-exchange": "mine", "x-dead-letter-routing-key": "q.mine",
		}}}}, []string{
			`queue 1 ("q"): the argument x-dead-letter-exchange conflicts with deadLetter, which sets it; remove one of them`,
			`queue 1 ("q"): the argument x-dead-letter-routing-key conflicts with deadLetter, which sets it; remove one of them`,
		}},
		{"dead-letter arguments by hand without deadLetter are allowed", Topology{Queues: []QueueSpec{{Name: "q", Arguments: transport.Table{
			"x-dead-letter-exchange": "mine",
		}}}}, nil},
		{"invalid policy", Topology{Queues: []QueueSpec{{Name: "q", Retry: ptr(Fixed(0, sec))}}}, []string{
			`queue 1 ("q"): retry ladder for q: invalid retry policy fixed(0, 1s): maxAttempts is 0 but must be from 1 to 10000 (it counts the first delivery)`,
		}},
		{"a broker delay that is not whole seconds", Topology{Queues: []QueueSpec{{Name: "q", Retry: ptr(Fixed(3, 1500*ms).WaitInBrokerFrom(sec))}}}, []string{
			`queue 1 ("q"): the broker wait 1.5s is not a whole number of seconds: its rung is named "1s" here, in Python and in Ruby, but "1500ms" in Java and .NET`,
		}},
		{"two rungs with one name", Topology{Queues: []QueueSpec{{Name: "q", Retry: ptr(Exponential(3, 2*sec, 2500*ms).WaitInBrokerFrom(sec))}}}, []string{
			`queue 1 ("q"): the broker waits 2s and 2.5s share the rung name "2s"; the first one's rung serves both`,
		}},
		{"a length limit that drops a message home from a contract rung", Topology{Queues: []QueueSpec{
			{Name: "a", Retry: ptr(Fixed(2, sec).WaitInBrokerFrom(sec)), Rungs: contract.ContractRungs, Arguments: transport.Table{"x-max-length": 10, "x-overflow": "reject-publish"}},
			{Name: "b", Type: transport.Classic, Retry: ptr(Fixed(2, sec).WaitInBrokerFrom(sec)), Rungs: contract.ContractRungs, Arguments: transport.Table{"x-max-length-bytes": 10, "x-overflow": "reject-publish-dlx"}},
		}}, []string{
			`queue 1 ("a"): x-overflow reject-publish drops without a word a message that comes home from a rung while the queue is full (RabbitMQ dead-letters at most once, with no confirm); use reject-publish-dlx with deadLetter, or drop-head`,
			`queue 2 ("b"): x-overflow reject-publish-dlx without a dead-letter exchange drops without a word a message that comes home from a rung while the queue is full; set deadLetter`,
		}},
		{"length limits that lose nothing quietly", Topology{Queues: []QueueSpec{
			{Name: "a", Type: transport.Classic, DeadLetter: true, Retry: ptr(Fixed(2, sec).WaitInBrokerFrom(sec)), Arguments: transport.Table{"x-max-length": 10, "x-overflow": "reject-publish-dlx"}},
			{Name: "b", Retry: ptr(Fixed(2, sec)), Arguments: transport.Table{"x-max-length": 10, "x-overflow": "reject-publish"}}, // no rungs
			{Name: "c", Arguments: transport.Table{"x-max-length": 10, "x-overflow": "reject-publish"}},                            // no retries
		}}, nil},
		{"rungs without a retry policy", Topology{Queues: []QueueSpec{{Name: "q", Rungs: contract.AtLeastOnceRungs}}}, []string{
			`queue 1 ("q"): rungs is "at-least-once" but the queue has no retry policy, so it has no rungs; set retry or drop rungs`,
		}},
		{"an unknown kind of rungs", Topology{Queues: []QueueSpec{{Name: "q", Retry: ptr(Fixed(2, minute)), Rungs: "quorum"}}}, []string{
			`queue 1 ("q"): retry ladder for q: unknown kind of rungs "quorum": use contract (the AceMQ contract's classic rungs) or at-least-once (quorum rungs that dead-letter at least once)`,
		}},
		{"at-least-once rungs generate names too", Topology{Queues: []QueueSpec{{Name: strings.Repeat("q", 240), Retry: ptr(Fixed(2, minute)), Rungs: contract.AtLeastOnceRungs}}}, []string{
			`queue 1 ("` + strings.Repeat("q", 240) + `"): the rung name "` + strings.Repeat("q", 240) + `.retry.quorum.1m" is longer than 255 bytes`,
		}},
		{"a queue that clashes with a generated one", Topology{Queues: []QueueSpec{
			{Name: "q", DeadLetter: true}, {Name: "q.dlq"},
		}}, []string{
			"queue q.dlq is declared two ways, as queue q.dlq (classic, durable) and as queue q.dlq (quorum, durable); RabbitMQ refuses the second with PRECONDITION_FAILED",
		}},
		{"a generated queue declared the same way is fine", Topology{Queues: []QueueSpec{
			{Name: "q", DeadLetter: true}, {Name: "q.dlq", Type: transport.Classic},
		}}, nil},
		{"an exchange that clashes with a generated one", Topology{
			Exchanges: []ExchangeSpec{{Name: "acemq.dlx", Type: transport.Topic}},
			Queues:    []QueueSpec{{Name: "q", DeadLetter: true}},
		}, []string{
			"exchange acemq.dlx is declared two ways, as exchange acemq.dlx (topic, durable) and as exchange acemq.dlx (direct, durable); RabbitMQ refuses the second with PRECONDITION_FAILED",
		}},
		{"renamed dead-letter exchange", Topology{DeadLetterExchange: "acemq.retry", Queues: []QueueSpec{{Name: "q"}}}, []string{
			"the dead-letter exchange cannot be acemq.retry, which routes retries home",
		}},
		{"renamed dead-letter exchange with a reserved name", Topology{DeadLetterExchange: "amq.direct"}, []string{
			"the dead-letter exchange: names starting with amq. are reserved by RabbitMQ",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.top.Validate()
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Validate = %v, want a *ValidationError", err)
			}
			if !slices.Equal(ve.Problems, tt.want) {
				t.Errorf("problems =\n  %s\nwant\n  %s", strings.Join(ve.Problems, "\n  "), strings.Join(tt.want, "\n  "))
			}
			if _, err := tt.top.Plan(); !errors.As(err, &ve) {
				t.Errorf("Plan of an invalid topology = %v, want the same *ValidationError", err)
			}
			f := newFake()
			if err := tt.top.Apply(context.Background(), f.conn()); err == nil || len(f.Declarations) > 0 {
				t.Errorf("Apply of an invalid topology declared %d things, err %v", len(f.Declarations), err)
			}
		})
	}
}

// What validates but loses messages on routine broker events is a warning:
// a quorum queue (the default type) with contract rungs, which only an
// explicit choice gives. A classic queue, a queue without rungs and one with
// at-least-once rungs (the default) are not warned of.
func TestTopologyWarnings(t *testing.T) {
	retry := ptr(Exponential(6, 10*sec, 5*minute))
	top := Topology{Queues: []QueueSpec{
		{Name: "quorum-contract", Retry: retry, Rungs: contract.ContractRungs},
		{Name: "quorum-explicit", Type: transport.Quorum, Retry: retry, Rungs: contract.ContractRungs},
		{Name: "classic-contract", Type: transport.Classic, Retry: retry, Rungs: contract.ContractRungs},
		{Name: "quorum-at-least-once", Retry: retry, Rungs: contract.AtLeastOnceRungs},
		{Name: "quorum-default", Retry: retry},
		{Name: "quorum-no-rungs", Retry: ptr(Fixed(3, sec))},
	}}
	if err := top.Validate(); err != nil {
		t.Fatalf("a warning is no problem: %v", err)
	}
	got := top.Warnings()
	want := []string{`queue 1 ("quorum-contract"): `, `queue 2 ("quorum-explicit"): `}
	if len(got) != len(want) {
		t.Fatalf("warnings %q, want two", got)
	}
	for i, w := range got {
		if !strings.HasPrefix(w, want[i]) || !strings.Contains(w, "broker restarts") || !strings.Contains(w, "rungs: at-least-once keeps it") {
			t.Errorf("warning %d = %q, want it to name the queue, the restart and the remedy", i, w)
		}
	}
}

// A transient queue that is not exclusive is one RabbitMQ deprecates (and
// may refuse): a warning names it and the remedy. An exclusive one is fine.
func TestTransientQueueWarning(t *testing.T) {
	top := Topology{Queues: []QueueSpec{
		{Name: "transient", Transient: true},
		{Name: "transient-auto-delete", Transient: true, AutoDelete: true},
		{Name: "transient-exclusive", Transient: true, Exclusive: true},
		{Name: "exclusive", Exclusive: true},
	}}
	if err := top.Validate(); err != nil {
		t.Fatalf("a warning is no problem: %v", err)
	}
	got := top.Warnings()
	want := []string{`queue 1 ("transient"): `, `queue 2 ("transient-auto-delete"): `}
	if len(got) != len(want) {
		t.Fatalf("warnings %q, want two", got)
	}
	for i, w := range got {
		if !strings.HasPrefix(w, want[i]) || !strings.Contains(w, "not exclusive") || !strings.Contains(w, "make it durable") {
			t.Errorf("warning %d = %q, want it to name the queue, the deprecation and the remedy", i, w)
		}
	}
}

// A quorum queue with a retry policy and nothing else chosen plans
// at-least-once rungs, and is warned of nothing: the default loses nothing.
func TestTopologyDefaultRungsAreAtLeastOnce(t *testing.T) {
	top := Topology{Queues: []QueueSpec{{Name: "orders.new", Type: transport.Quorum, Retry: ptr(Exponential(6, 10*sec, 5*minute))}}}
	plan, err := top.Plan()
	if err != nil {
		t.Fatal(err)
	}
	var rungs []string
	for _, d := range plan {
		if q, ok := d.(transport.Queue); ok && strings.Contains(q.Name, ".retry.") {
			rungs = append(rungs, q.String())
		}
	}
	rung := func(delay string, ttl int) string {
		return fmt.Sprintf(`queue orders.new.retry.quorum.%s (quorum, durable) {x-dead-letter-exchange: "acemq.retry", x-dead-letter-routing-key: "orders.new", `+
			`x-dead-letter-strategy: "at-least-once", x-message-ttl: %d, x-overflow: "reject-publish"}`, delay, ttl)
	}
	want := []string{rung("40s", 40000), rung("80s", 80000), rung("160s", 160000)}
	if !slices.Equal(rungs, want) {
		t.Errorf("rungs planned\n  %s\nwant\n  %s", strings.Join(rungs, "\n  "), strings.Join(want, "\n  "))
	}
	if w := top.Warnings(); len(w) != 0 {
		t.Errorf("warnings %q, want none", w)
	}
}

// A full source queue refuses a message coming home: a contract rung drops
// it, an at-least-once rung keeps it until there is room (rungloss_test.go),
// so only contract rungs make such a limit a problem.
func TestAtLeastOnceRungsAllowRejectPublish(t *testing.T) {
	q := QueueSpec{Name: "a", Retry: ptr(Fixed(2, sec).WaitInBrokerFrom(sec)), Rungs: contract.AtLeastOnceRungs,
		Arguments: transport.Table{"x-max-length": 10, "x-overflow": "reject-publish"}}
	if err := (Topology{Queues: []QueueSpec{q}}).Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestValidationErrorMessage(t *testing.T) {
	one := &ValidationError{Problems: []string{"a"}}
	two := &ValidationError{Problems: []string{"a", "b"}}
	if one.Error() != "invalid topology: a" || two.Error() != "invalid topology, 2 problems:\n  - a\n  - b" {
		t.Errorf("messages %q and %q", one, two)
	}
}

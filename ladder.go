package acemq

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/acemq-go/acemq/transport"
)

// RungKind is the kind of queue a ladder's rungs are, chosen per source
// queue.
type RungKind string

const (
	// ContractRungs are the rungs every AceMQ library declares (CONTRACT.md
	// section 2): classic queues named Q.retry.<delay>. RabbitMQ
	// dead-letters from a classic queue at most once, so a message due home
	// while the source queue cannot take it (a quorum source without a
	// leader during a broker restart or a failover, a full source) is
	// dropped without a word. The default, for queues shared with the other
	// libraries' consumers.
	ContractRungs RungKind = "contract"
	// AtLeastOnceRungs are this library's extension of the contract: quorum
	// queues named Q.retry.quorum.<delay>, dead-lettering at least once
	// (x-dead-letter-strategy at-least-once, x-overflow reject-publish,
	// RabbitMQ 3.10 and later): a rung keeps each message until its source
	// queue has confirmed it. No other AceMQ library declares them; a queue
	// whose Go consumers use them and whose other consumers use contract
	// rungs works, every rung coming home through RetryExchange.
	AtLeastOnceRungs RungKind = "at-least-once"
)

// ParseRungKind reads "contract" or "at-least-once"; "" is ContractRungs.
func ParseRungKind(s string) (RungKind, error) {
	switch k := RungKind(s); k {
	case "", ContractRungs:
		return ContractRungs, nil
	case AtLeastOnceRungs:
		return k, nil
	}
	return "", fmt.Errorf("unknown kind of rungs %q: use %s (the AceMQ contract's classic rungs) or %s (quorum rungs that dead-letter at least once)",
		s, ContractRungs, AtLeastOnceRungs)
}

// The arguments of an at-least-once rung beyond the contract's three.
const (
	argDeadLetterStrategy = "x-dead-letter-strategy"
	argOverflow           = "x-overflow"
	// at-least-once dead-lettering needs reject-publish: under the default
	// drop-head RabbitMQ falls back to at most once.
	atLeastOnce   = "at-least-once"
	rejectPublish = "reject-publish"
)

// Rung is one queue of a retry ladder. Nothing consumes it: its time-to-live
// is the wait, and its dead-letter target is the source queue, through
// RetryExchange.
type Rung struct {
	Queue  string
	Delay  time.Duration
	Source string
	Kind   RungKind
}

// Arguments are the rung's queue arguments: for a contract rung exactly the
// three of CONTRACT.md section 2 (x-message-ttl in whole milliseconds as an
// AMQP long, x-dead-letter-exchange and -routing-key); an at-least-once rung
// adds x-dead-letter-strategy at-least-once and x-overflow reject-publish.
func (r Rung) Arguments() transport.Table {
	args := transport.Table{
		"x-message-ttl":         r.Delay.Milliseconds(),
		argDeadLetterExchange:   RetryExchange,
		argDeadLetterRoutingKey: r.Source,
	}
	if r.Kind == AtLeastOnceRungs {
		args[argDeadLetterStrategy] = atLeastOnce
		args[argOverflow] = rejectPublish
	}
	return args
}

// Declaration is the rung as it is declared: durable, not exclusive, not
// auto-delete; classic for a contract rung, quorum for an at-least-once one.
func (r Rung) Declaration() transport.Queue {
	typ := transport.Classic
	if r.Kind == AtLeastOnceRungs {
		typ = transport.Quorum
	}
	return transport.Queue{Name: r.Queue, Type: typ, Durable: true, Arguments: r.Arguments()}
}

// RetryLadder is the set of rungs a retry policy needs for one source queue,
// known before anything is published (CONTRACT.md section 4).
type RetryLadder struct {
	source string
	policy RetryPolicy
	kind   RungKind
	rungs  []Rung
}

// NewRetryLadder builds the ladder of source under policy, with rungs of
// kind ("" is ContractRungs). It touches no broker; it fails only on a blank
// source, an invalid policy or an unknown kind.
func NewRetryLadder(source string, policy RetryPolicy, kind RungKind) (RetryLadder, error) {
	if strings.TrimSpace(source) == "" {
		return RetryLadder{}, errors.New("retry ladder: the source queue name is blank")
	}
	if err := policy.Validate(); err != nil {
		return RetryLadder{}, fmt.Errorf("retry ladder for %s: %w", source, err)
	}
	kind, err := ParseRungKind(string(kind))
	if err != nil {
		return RetryLadder{}, fmt.Errorf("retry ladder for %s: %w", source, err)
	}
	l := RetryLadder{source: source, policy: policy, kind: kind}
	for _, d := range policy.BrokerRungs() {
		l.rungs = append(l.rungs, Rung{Queue: rungQueue(source, d, kind), Delay: d, Source: source, Kind: kind})
	}
	return l, nil
}

// Source is the queue the ladder's messages come home to.
func (l RetryLadder) Source() string { return l.source }

// Policy is the policy the ladder was built from.
func (l RetryLadder) Policy() RetryPolicy { return l.policy }

// Kind is the kind of the ladder's rungs.
func (l RetryLadder) Kind() RungKind {
	if l.kind == "" { // the zero RetryLadder
		return ContractRungs
	}
	return l.kind
}

// Rungs are the ladder's rungs in schedule order.
func (l RetryLadder) Rungs() []Rung { return append([]Rung(nil), l.rungs...) }

// Empty reports whether the ladder has no rung: every wait is the consumer's.
func (l RetryLadder) Empty() bool { return len(l.rungs) == 0 }

// Queues are the names of the rungs, in schedule order.
func (l RetryLadder) Queues() []string {
	names := make([]string, len(l.rungs))
	for i, r := range l.rungs {
		names[i] = r.Queue
	}
	return names
}

// WaitsInBroker tells whether a wait of d goes to a rung under the policy.
func (l RetryLadder) WaitsInBroker(d time.Duration) bool { return l.policy.WaitsInBroker(d) }

// RungFor is the rung that holds a wait of d: the shortest one at least d
// long, else the longest. It is none when the ladder is empty or d waits in
// the consumer.
func (l RetryLadder) RungFor(d time.Duration) (Rung, bool) {
	if l.Empty() || !l.WaitsInBroker(d) {
		return Rung{}, false
	}
	best, longest := -1, 0
	for i, r := range l.rungs {
		if r.Delay >= d && (best < 0 || r.Delay < l.rungs[best].Delay) {
			best = i
		}
		if r.Delay > l.rungs[longest].Delay {
			longest = i
		}
	}
	if best < 0 {
		best = longest
	}
	return l.rungs[best], true
}

// String is "no retry rungs for Q" or "retry rungs for Q: Q.retry.40s, ...".
func (l RetryLadder) String() string {
	if l.Empty() {
		return "no retry rungs for " + l.source
	}
	return "retry rungs for " + l.source + ": " + strings.Join(l.Queues(), ", ")
}

// Declarations are what the ladder declares, in the contract's order: when
// there is a rung, RetryExchange, every rung and the source queue's binding
// to RetryExchange under its own name; then, always, the dead-letter half.
// The source queue itself belongs to its owner and is not declared.
func (l RetryLadder) Declarations() []transport.Declaration {
	var ds []transport.Declaration
	if !l.Empty() {
		ds = append(ds, transport.Exchange{Name: RetryExchange, Type: transport.Direct, Durable: true})
		for _, r := range l.rungs {
			ds = append(ds, r.Declaration())
		}
		ds = append(ds, transport.Binding{Queue: l.source, Exchange: RetryExchange, RoutingKey: l.source})
	}
	return append(ds, deadLetterDeclarations(l.source, DeadLetterExchange)...)
}

// Declare sends the ladder's declarations to d, stopping at the first error.
func (l RetryLadder) Declare(ctx context.Context, d transport.Declarer) error {
	return declareAll(ctx, d, l.Declarations())
}

// DeclareDeadLetters declares only the dead-letter half: DeadLetterExchange,
// Q.dlq and Q.parked, each bound under its own name.
func (l RetryLadder) DeclareDeadLetters(ctx context.Context, d transport.Declarer) error {
	return declareAll(ctx, d, deadLetterDeclarations(l.source, DeadLetterExchange))
}

// deadLetterDeclarations is the dead-letter half of source, routed through
// exchange: the exchange, Q.dlq and Q.parked (classic, durable, no
// arguments), each bound to the exchange under its own name.
func deadLetterDeclarations(source, exchange string) []transport.Declaration {
	dlq, parked := DeadLetterQueue(source), ParkedQueue(source)
	return []transport.Declaration{
		transport.Exchange{Name: exchange, Type: transport.Direct, Durable: true},
		transport.Queue{Name: dlq, Type: transport.Classic, Durable: true},
		transport.Binding{Queue: dlq, Exchange: exchange, RoutingKey: dlq},
		transport.Queue{Name: parked, Type: transport.Classic, Durable: true},
		transport.Binding{Queue: parked, Exchange: exchange, RoutingKey: parked},
	}
}

// declareAll sends each declaration in order and names the one that failed.
func declareAll(ctx context.Context, d transport.Declarer, ds []transport.Declaration) error {
	for _, decl := range ds {
		if err := decl.DeclareOn(ctx, d); err != nil {
			return fmt.Errorf("declaring %s: %w", decl, err)
		}
	}
	return nil
}

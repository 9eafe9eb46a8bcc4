package retry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

// Rung is one queue of a retry ladder. Nothing consumes it: its time-to-live
// is the wait, and its dead-letter target is the source queue, through
// contract.RetryExchange.
type Rung struct {
	Queue  string
	Delay  time.Duration
	Source string
	Kind   contract.RungKind
}

// Declaration is the rung as it is declared: durable, not exclusive, not
// auto-delete; classic for a contract rung, quorum for an at-least-once one,
// with contract.RungArguments.
func (r Rung) Declaration() transport.Queue {
	typ := transport.Classic
	if r.Kind == contract.AtLeastOnceRungs {
		typ = transport.Quorum
	}
	return transport.Queue{Name: r.Queue, Type: typ, Durable: true,
		Arguments: contract.RungArguments(r.Source, r.Delay.Milliseconds(), r.Kind)}
}

// Ladder is the set of rungs a retry policy needs for one source queue,
// known before anything is published (CONTRACT.md section 4).
type Ladder struct {
	source string
	policy Policy
	kind   contract.RungKind
	rungs  []Rung
}

// NewLadder builds the ladder of source under policy, with rungs of kind
// ("" is contract.DefaultRungKind). It touches no broker; it fails only on a
// blank source, an invalid policy or an unknown kind.
func NewLadder(source string, policy Policy, kind contract.RungKind) (Ladder, error) {
	if strings.TrimSpace(source) == "" {
		return Ladder{}, errors.New("retry ladder: the source queue name is blank")
	}
	if err := policy.Validate(); err != nil {
		return Ladder{}, fmt.Errorf("retry ladder for %s: %w", source, err)
	}
	kind, err := contract.ParseRungKind(string(kind))
	if err != nil {
		return Ladder{}, fmt.Errorf("retry ladder for %s: %w", source, err)
	}
	l := Ladder{source: source, policy: policy, kind: kind}
	for _, d := range RungDelays(policy) {
		l.rungs = append(l.rungs, Rung{Queue: contract.RungQueue(source, d, kind), Delay: d, Source: source, Kind: kind})
	}
	return l, nil
}

// Source is the queue the ladder's messages come home to.
func (l Ladder) Source() string { return l.source }

// Policy is the policy the ladder was built from.
func (l Ladder) Policy() Policy { return l.policy }

// Kind is the kind of the ladder's rungs.
func (l Ladder) Kind() contract.RungKind {
	if l.kind == "" { // the zero Ladder
		return contract.DefaultRungKind
	}
	return l.kind
}

// Rungs are the ladder's rungs in schedule order.
func (l Ladder) Rungs() []Rung { return append([]Rung(nil), l.rungs...) }

// Empty reports whether the ladder has no rung: every wait is the consumer's.
func (l Ladder) Empty() bool { return len(l.rungs) == 0 }

// Queues are the names of the rungs, in schedule order.
func (l Ladder) Queues() []string {
	names := make([]string, len(l.rungs))
	for i, r := range l.rungs {
		names[i] = r.Queue
	}
	return names
}

// RungFor is the rung that holds a wait of d: the shortest one at least d
// long, else the longest. It is none when the ladder is empty or d waits in
// the consumer.
func (l Ladder) RungFor(d time.Duration) (Rung, bool) {
	if l.Empty() || !WaitsOnRung(l.policy, d) {
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
func (l Ladder) String() string {
	if l.Empty() {
		return "no retry rungs for " + l.source
	}
	return "retry rungs for " + l.source + ": " + strings.Join(l.Queues(), ", ")
}

// Declarations are what the ladder declares, in the contract's order: when
// there is a rung, contract.RetryExchange, every rung and the source queue's
// binding to it under its own name; then, always, the dead-letter half. The
// source queue itself belongs to its owner and is not declared.
func (l Ladder) Declarations() []transport.Declaration {
	var ds []transport.Declaration
	if !l.Empty() {
		ds = append(ds, transport.Exchange{Name: contract.RetryExchange, Type: transport.Direct, Durable: true})
		for _, r := range l.rungs {
			ds = append(ds, r.Declaration())
		}
		ds = append(ds, transport.Binding{Queue: l.source, Exchange: contract.RetryExchange, RoutingKey: l.source})
	}
	return append(ds, DeadLetterDeclarations(l.source, contract.DeadLetterExchange)...)
}

// Declare sends the ladder's declarations to d, stopping at the first error.
func (l Ladder) Declare(ctx context.Context, d transport.Declarer) error {
	return transport.DeclareAll(ctx, d, l.Declarations())
}

// DeclareDeadLetters declares only the dead-letter half:
// contract.DeadLetterExchange, Q.dlq and Q.parked, each bound under its own
// name.
func (l Ladder) DeclareDeadLetters(ctx context.Context, d transport.Declarer) error {
	return transport.DeclareAll(ctx, d, DeadLetterDeclarations(l.source, contract.DeadLetterExchange))
}

// DeadLetterDeclarations is the dead-letter half of source, routed through
// exchange: the exchange, Q.dlq and Q.parked (classic, durable, no
// arguments), each bound to the exchange under its own name.
func DeadLetterDeclarations(source, exchange string) []transport.Declaration {
	dlq, parked := contract.DeadLetterQueue(source), contract.ParkedQueue(source)
	return []transport.Declaration{
		transport.Exchange{Name: exchange, Type: transport.Direct, Durable: true},
		transport.Queue{Name: dlq, Type: transport.Classic, Durable: true},
		transport.Binding{Queue: dlq, Exchange: exchange, RoutingKey: dlq},
		transport.Queue{Name: parked, Type: transport.Classic, Durable: true},
		transport.Binding{Queue: parked, Exchange: exchange, RoutingKey: parked},
	}
}

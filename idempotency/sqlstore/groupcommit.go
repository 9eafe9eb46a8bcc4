package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/acemq-go/acemq/idempotency"
)

// Group commit: the claims, confirms and forgets that callers make while a
// write of the store is in flight wait, and go to the database together,
// in one flight (flight.go), as soon as it returns. A caller alone goes at
// once: no timer, nothing waits for company. Each caller gets its own
// answer, and only once its write is committed: a claim is durable before
// the handler runs, a confirm before the message is acked.

// maxGroup bounds the writes of one flight: 5 parameters each, well within
// SQLite's 32,766 and PostgreSQL's 65,535.
const maxGroup = 100

// flightTimeout bounds a flight: its context is none of its callers', whose
// writes are made for all of them together.
const flightTimeout = 30 * time.Second

type opKind uint8

const (
	opClaim opKind = iota
	opConfirm
	opForget
)

// op is one caller's write, waiting for its flight.
type op struct {
	ctx  context.Context
	kind opKind
	key  string
	// owner is a claim's or a forget's.
	owner string
	// d is a claim's timeout, a confirm's retention.
	d time.Duration
	// lookups counts a claim's flights that found neither its row nor room
	// to insert it (the row changed between the write and the read).
	lookups int
	done    chan opResult // buffered: the flight never waits for the caller
}

type opResult struct {
	res idempotency.Result
	err error
}

// answer gives o its result; an op already answered keeps its first.
func (o *op) answer(res idempotency.Result, err error) {
	select {
	case o.done <- opResult{res, err}:
	default:
	}
}

// group gathers ops and flies them, one flight at a time.
type group struct {
	fly func(ctx context.Context, ops []*op) (again []*op)

	mu      sync.Mutex
	waiting []*op
	flying  bool
}

// do makes o's write, in the next flight, and returns its answer; or ctx's
// error if ctx ends first (a write already in flight is made all the same).
func (g *group) do(ctx context.Context, o *op) (idempotency.Result, error) {
	o.ctx, o.done = ctx, make(chan opResult, 1)
	g.mu.Lock()
	g.waiting = append(g.waiting, o)
	if !g.flying {
		g.flying = true
		go g.flights()
	}
	g.mu.Unlock()
	select {
	case r := <-o.done:
		return r.res, r.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// flights flies the waiting ops until none is left.
func (g *group) flights() {
	for {
		g.mu.Lock()
		ops := g.take()
		if len(ops) == 0 {
			g.flying = false
			g.mu.Unlock()
			return
		}
		g.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), flightTimeout)
		again := g.flyCaught(ctx, ops)
		cancel()
		if len(again) > 0 {
			g.mu.Lock()
			g.waiting = append(again, g.waiting...)
			g.mu.Unlock()
		}
	}
}

// flyCaught is g.fly with a panic in it (a driver's) made the error of each
// op it had not answered, as the panic was the caller's own before writes
// were grouped, rather than the end of the process.
func (g *group) flyCaught(ctx context.Context, ops []*op) (again []*op) {
	defer func() {
		if p := recover(); p != nil {
			for _, o := range ops {
				o.answer(0, fmt.Errorf("idempotency: the store's write of %q panicked: %v", o.key, p))
			}
			again = nil
		}
	}()
	return g.fly(ctx, ops)
}

// take returns the next flight's ops, in the order they came: at most
// maxGroup, and one per key (a statement may touch a row once; a second
// write of the key waits for the next flight, so a key's writes keep their
// order). An op whose caller has gone is answered and dropped.
func (g *group) take() []*op {
	var ops, rest []*op
	keys := make(map[string]bool, len(g.waiting))
	for _, o := range g.waiting {
		switch {
		case o.ctx.Err() != nil:
			o.answer(0, o.ctx.Err())
		case len(ops) == maxGroup || keys[o.key]:
			rest = append(rest, o)
		default:
			keys[o.key] = true
			ops = append(ops, o)
		}
	}
	g.waiting = rest
	return ops
}

// claimsAlone is the store with each claim made at once, in a flight of
// its own in the caller's goroutine: TxHandler's. Its confirm is a
// transaction of its own per message, so grouping its claims only adds
// the wait for the flight in progress (measured: TxHandler at 0.33 to 0.69
// of its speed with its claims grouped, notes/issue30-idempotent.md).
type claimsAlone struct{ *Store }

// Claim implements idempotency.Store.
func (s claimsAlone) Claim(ctx context.Context, key, owner string, timeout time.Duration) (idempotency.Result, error) {
	o, err := claimOp(key, owner, timeout)
	if err != nil {
		return 0, err
	}
	o.ctx, o.done = ctx, make(chan opResult, 1)
	for len(s.fly(ctx, []*op{o})) > 0 { // its row vanished before the read: again
	}
	r := <-o.done
	return r.res, r.err
}

// claimOp is a claim's op, its arguments checked.
func claimOp(key, owner string, timeout time.Duration) (*op, error) {
	if err := errors.Join(idempotency.CheckKey(key), idempotency.CheckOwner(owner), idempotency.CheckDuration("claim timeout", timeout)); err != nil {
		return nil, err
	}
	return &op{kind: opClaim, key: key, owner: owner, d: timeout}, nil
}

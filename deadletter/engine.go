package deadletter

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/time/rate"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/internal/confirm"
)

// window is how many moves may await their confirms at once: taking goes
// on while the broker confirms.
const window = 512

// settleTimeout bounds the wait for one move's confirm. A lost connection
// fails the moves it had in flight at once; this is for a broker that does
// not answer.
const settleTimeout = 30 * time.Second

// item is a message taken from a source, the queue it was set aside in
// (for an import: exported from), and how to remove its original.
type item struct {
	msg   acemq.RawMessage
	queue string
	ack   func() error
}

// source gives the next message to move; ok is false when there is none.
type source func(ctx context.Context) (it item, ok bool, err error)

// sink is where the messages moved go.
type sink interface {
	// send starts moving m; its answer is nil once m is safely there, or
	// an error once it certainly is not.
	send(ctx context.Context, m acemq.RawMessage) answer
	// flush asks for everything sent to be made safe: the sink may hold
	// answers back until then (a file until it is synced).
	flush()
}

// answer is a move's answer to come: the broker's confirm (an
// *acemq.Pending) or a file's sync (a *transport.Confirmation).
type answer interface {
	Done() <-chan struct{}
	Wait(ctx context.Context) error
}

// inFlight is a move sent and not yet settled.
type inFlight struct {
	item
	answer
}

// mover moves messages from a source to a sink, removing each original
// only once the sink has it safely.
type mover struct {
	o        Options
	src      source
	dst      sink
	max      int // take no more than this many; < 0: no bound
	now      func() time.Time
	limiter  *rate.Limiter
	p        Progress
	inFlight *confirm.Window[inFlight]
}

func newMover(o Options, src source, dst sink, max int) *mover {
	m := &mover{o: o, src: src, dst: dst, max: max, now: o.clock()}
	m.inFlight = confirm.New(window, m.settle)
	if o.Rate > 0 {
		m.limiter = rate.NewLimiter(rate.Limit(o.Rate), 1)
	}
	return m
}

// run moves until the source is done, o.Limit is reached, a move fails (it
// stops at the first failure) or ctx ends; then it settles the moves in
// flight, the messages in hand, even once ctx has ended.
func (m *mover) run(ctx context.Context) (Progress, error) {
	err := m.loop(ctx)
	m.dst.flush()
	err = cmp.Or(err, m.inFlight.Drain())
	m.report()
	if err != nil {
		return m.p, err
	}
	if err := context.Cause(ctx); err != nil {
		return m.p, fmt.Errorf("stopped: %w", err)
	}
	return m.p, nil
}

func (m *mover) loop(ctx context.Context) error {
	for (m.max < 0 || m.p.Taken < m.max) && (m.o.Limit == 0 || m.p.Moved+m.inFlight.Len() < m.o.Limit) && ctx.Err() == nil {
		it, ok, err := m.src(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("taking the next message: %w", err)
		}
		if !ok {
			return nil
		}
		m.p.Taken++
		match, err := m.o.Match.Match(it.queue, it.msg, m.now())
		switch {
		case err != nil:
			m.p.Left++
			return err
		case !match:
			m.p.Left++ // its original stays
			m.report()
			continue
		case m.o.DryRun:
			m.p.Moved++ // would be; its original stays
			m.report()
			continue
		}
		if m.limiter != nil && m.limiter.Wait(ctx) != nil {
			m.p.Left++ // never sent
			return nil
		}
		err = m.inFlight.Add(inFlight{it, m.dst.send(ctx, it.msg)})
		m.report()
		// Settle what is answered already, so that acks go out steadily.
		if err = cmp.Or(err, m.inFlight.SettleAnswered()); err != nil {
			return err
		}
	}
	return nil
}

// settle waits for a move in flight to be answered (flushing the sink
// first when it is not), then removes its original when it is safely at its
// target. It returns the move's failure, if any. The window settles the
// moves in the order sent, even once the move's context has ended.
func (m *mover) settle(f inFlight) error {
	select {
	case <-f.Done():
	default:
		m.dst.flush()
	}
	ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
	defer cancel()
	err := f.Wait(ctx)
	switch {
	case refused(err):
		m.p.Left++
		err = fmt.Errorf("message %s: %w", describe(f.msg), err)
	case err != nil:
		m.doubtful(f.msg)
		err = fmt.Errorf("message %s may or may not be at its target: %w", describe(f.msg), err)
	default:
		if err = f.ack(); err != nil {
			m.doubtful(f.msg)
			err = fmt.Errorf("message %s is at its target, but its original could not be removed: %w", describe(f.msg), err)
		} else {
			m.p.Moved++
		}
	}
	m.report()
	return err
}

// doubtful counts a message that may now be in both places, and names it.
func (m *mover) doubtful(msg acemq.RawMessage) {
	m.p.Doubtful++
	if m.o.Doubtful != nil {
		m.o.Doubtful(Identity(msg))
	}
}

func (m *mover) report() {
	if m.o.Progress != nil {
		m.o.Progress(m.p)
	}
}

// refused says the broker certainly did not take a message: it came back
// unroutable, was refused, or broke a rule. Any other failure (a lost
// connection, no answer in time) leaves it unknown.
func refused(err error) bool {
	return errors.Is(err, acemq.ErrUnroutable) || errors.Is(err, acemq.ErrRefused) ||
		errors.Is(err, acemq.ErrPreconditionFailed) || errors.Is(err, errNotSent)
}

// errNotSent marks a message a sink could not even start to move.
var errNotSent = errors.New("not sent")

// describe names a message in an error: its id, or that it has none.
func describe(m acemq.RawMessage) string {
	if id := acemq.ReadEnvelope(m).ID; id != "" {
		return id
	}
	return "(no id)"
}

// fromQueue goes through queue as it stands: no more messages than it held
// at the start are taken. The messages not moved stay with the Taker,
// unacknowledged, and closing it puts them back in their places. With keep,
// nothing is removed: what the sink has is copied, not moved.
func fromQueue(ctx context.Context, c *acemq.Conn, queue string, o Options, dst sink, keep bool) (Progress, error) {
	state, err := c.InspectQueue(ctx, queue)
	if err != nil {
		return Progress{}, err
	}
	taker, err := c.Take(ctx, queue)
	if err != nil {
		return Progress{}, err
	}
	src := func(ctx context.Context) (item, bool, error) {
		d, ok, err := taker.Next(ctx)
		it := item{msg: d.Message, queue: queue, ack: d.Ack}
		if keep {
			it.ack = func() error { return nil }
		}
		return it, ok, err
	}
	m := newMover(o, src, dst, state.Messages)
	m.p.Total = state.Messages
	// What was taken and not removed goes back; whoever reads the queue
	// next (the end report of a console job, say) finds it there.
	var p Progress
	defer func() {
		removed := 0
		if !keep && !o.DryRun {
			removed = p.Moved + p.Doubtful
		}
		_ = handBack(c, taker, queue, wantBack(state, p.Taken, removed))
	}()
	p, err = m.run(ctx)
	return p, err
}

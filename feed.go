package acemq

import (
	"context"
	"errors"
	"iter"
	"sync"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

// feed is one subscription of the consumer. While it is the current one,
// the workers read it in turns: the worker whose turn it is ranges its
// deliveries, and having taken one it leaves the turn to the next idle
// worker and handles that delivery itself, so that no goroutine stands
// between the client library's and the handler's (each hand-over costs a
// wake-up per message). Once it is retired (a pause, a new prefetch, a
// halt, Close) a forwarder of its own takes what it still delivers and
// hands it to the workers, or back to the queue; until it has ended, the
// current feed is forwarded too, so that no worker waits on it while the
// retired one's deliveries wait for a worker.
type feed struct {
	sub        transport.Subscription
	deliveries iter.Seq[transport.Delivery]
	prefetch   int
	retired    bool // under Consumer.turnMu, as ended is
	ended      bool
	handBack   chan struct{} // closed by a pause
	backing    sync.Once
	done       chan struct{} // closed once its deliveries have ended
}

// stopFeeding makes f hand back what it still delivers.
func (f *feed) stopFeeding() { f.backing.Do(func() { close(f.handBack) }) }

// handingBack says whether a pause has told f to hand back.
func (f *feed) handingBack() bool {
	select {
	case <-f.handBack:
		return true
	default:
		return false
	}
}

// next takes f's next delivery; false once its deliveries have ended.
func (f *feed) next() (transport.Delivery, bool) {
	for d := range f.deliveries {
		return d, true
	}
	return transport.Delivery{}, false
}

// subscribe starts a subscription at prefetch, the workers' to read in
// turns; ctl is held (or Consume is starting).
func (c *Consumer) subscribe(ctx context.Context, prefetch int) error {
	f, err := c.newFeed(ctx, prefetch)
	if err != nil {
		return err
	}
	c.passTurn(f)
	return nil
}

// resubscribe replaces the subscription with one at prefetch; the old one's
// deliveries are still handled. ctl is held.
func (c *Consumer) resubscribe(ctx context.Context, prefetch int) error {
	old := c.current
	f, err := c.newFeed(ctx, prefetch)
	if err != nil {
		return err
	}
	c.retire(old) // before the new one takes the turn
	c.passTurn(f)
	if err := old.sub.Cancel(ctx); err != nil && !errors.Is(err, ErrClosed) {
		c.logger.Warn("acemq: cancelling the replaced subscription failed", "consumer", c.id, "error", err)
	}
	return nil
}

// newFeed subscribes at prefetch and makes that the current feed, its
// turn not yet given; ctl is held.
func (c *Consumer) newFeed(ctx context.Context, prefetch int) (*feed, error) {
	opts := c.subscription
	opts.Prefetch = prefetch
	sub, err := c.transport.Consume(ctx, c.queue, opts)
	if err != nil {
		return nil, err
	}
	f := &feed{sub: sub, deliveries: sub.Deliveries(), prefetch: prefetch, handBack: make(chan struct{}), done: make(chan struct{})}
	c.current = f
	c.live[f] = struct{}{}
	c.feeds.add()
	return f, nil
}

// passTurn leaves f's turn to the next idle worker, or to a forwarder
// while workers cannot read f: once f is retired, and while a retired
// feed still delivers (a worker waiting on f would not take what that
// one's forwarder hands over). Only the current feed is ever free: a
// replaced one is retired before its successor's turn is given.
func (c *Consumer) passTurn(f *feed) {
	if !c.turnToWorkers(f) {
		go c.forward(f)
	}
}

// turnToWorkers makes f free for the next idle worker, unless workers
// cannot read it; it says whether it did.
func (c *Consumer) turnToWorkers(f *feed) bool {
	c.turnMu.Lock()
	if f.retired || c.draining > 0 {
		c.turnMu.Unlock()
		return false
	}
	c.free = f
	c.turnMu.Unlock()
	select { // a token already there wakes a worker all the same
	case c.turnFree <- struct{}{}:
	default:
	}
	return true
}

// takeTurn reads the free feed, if no other worker took it meanwhile:
// one delivery, which it handles once it has passed the turn on.
func (c *Consumer) takeTurn(w worker) {
	c.turnMu.Lock()
	f := c.free
	c.free = nil
	c.turnMu.Unlock()
	if f == nil {
		return
	}
	d, ok := f.next()
	if !ok {
		c.ended(f)
		return
	}
	// Counted busy before the turn passes on, so that Pause, once f has
	// ended, finds every delivery it took in busy.
	c.busy.add()
	c.passTurn(f)
	if f.handingBack() {
		c.handBackPaused(d)
		return
	}
	if !c.handleOne(w, d) {
		c.busy.done()
	}
}

// retire makes f no longer the workers' to read: a forwarder takes what
// it still delivers, started here if no one is reading it, or by the
// worker reading it once it has taken its delivery. ctl is held.
func (c *Consumer) retire(f *feed) {
	c.turnMu.Lock()
	if !f.retired && !f.ended {
		c.draining++
	}
	f.retired = true
	free := c.free == f
	if free {
		c.free = nil
	}
	c.turnMu.Unlock()
	if free {
		go c.forward(f)
	}
}

// forward hands f's deliveries to the workers: once the consumer closes,
// or f is paused, it hands them back instead. It ends when f's
// deliveries do (after its cancel), or, f being current again and no
// retired feed left delivering, once it has left f's turn to the workers.
func (c *Consumer) forward(f *feed) {
	for {
		d, ok := f.next()
		if !ok {
			c.ended(f)
			return
		}
		c.busy.add() // see takeTurn
		c.forwardOne(f, d)
		if c.turnToWorkers(f) {
			return
		}
	}
}

// forwardOne hands d to a worker, or back once f is paused or the
// consumer closes.
func (c *Consumer) forwardOne(f *feed, d transport.Delivery) {
	select { // a pause or a close comes first
	case <-f.handBack:
		c.handBackPaused(d)
		return
	case <-c.stopped:
		c.requeueAtEnd(c.start(d))
		c.busy.done()
		return
	default:
	}
	select {
	case c.feed <- d: // the worker is done with busy
	case <-f.handBack:
		c.handBackPaused(d)
	case <-c.stopped:
		c.requeueAtEnd(c.start(d))
		c.busy.done()
	}
}

// ended records that f's deliveries have ended.
func (c *Consumer) ended(f *feed) {
	c.turnMu.Lock()
	f.ended = true
	if f.retired {
		c.draining--
	}
	c.turnMu.Unlock()
	c.ctl.Lock()
	delete(c.live, f)
	c.ctl.Unlock()
	close(f.done)
	c.feeds.done()
}

// handBackPaused hands back d, which arrived after a pause, unhandled.
func (c *Consumer) handBackPaused(d transport.Delivery) {
	c.requeue(c.start(d), contract.ReasonPaused)
	c.busy.done()
}

package console

import (
	"context"
	"sync"
	"time"
)

// gate lets one reader at a time hold a queue's messages: a snapshot pass
// (which holds every message it has read until it ends), or a job or a
// confirmation's count (which take them to move or count them). Were two
// to hold messages of one queue at once, each would see only part of it:
// a replay would count as left what a view held, and report success with
// messages still there.
//
// A job comes first: asking for the gate stops the pass that holds it (the
// snapshot keeps what it read, marked interrupted), and a pass waits while
// a job waits.
type gate struct {
	sem     chan struct{} // full while someone holds the queue
	mu      sync.Mutex
	waiting int                // jobs waiting for the gate
	jobs    int                // jobs waiting for it or holding it
	stop    context.CancelFunc // the pass holding it, to stop for a job
	arrived chan struct{}      // closed (and replaced) when a job asks for it
}

func newGate() *gate { return &gate{sem: make(chan struct{}, 1), arrived: make(chan struct{})} }

// jobArrives is closed when a job next asks for the gate.
func (g *gate) jobArrives() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.arrived
}

// holdForJob waits for the queue, stopping a pass that holds it, and
// returns the release.
func (g *gate) holdForJob(ctx context.Context) (release func(), err error) {
	g.mu.Lock()
	g.waiting++
	g.jobs++
	close(g.arrived)
	g.arrived = make(chan struct{})
	if g.stop != nil {
		g.stop()
	}
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.waiting--
		g.mu.Unlock()
	}()
	done := func() {
		g.mu.Lock()
		g.jobs--
		g.mu.Unlock()
	}
	select {
	case g.sem <- struct{}{}:
		return func() { <-g.sem; done() }, nil
	case <-ctx.Done():
		done()
		return nil, context.Cause(ctx)
	}
}

// busy says whether a job (or a confirmation's count) holds the queue or
// waits for it: a page then answers at once rather than wait for it.
func (g *gate) busy() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.jobs > 0
}

// holdForPass waits for the queue while no job wants it, and returns a
// context that ends when one does, with the release.
func (g *gate) holdForPass(ctx context.Context) (context.Context, func(), error) {
	for {
		select {
		case g.sem <- struct{}{}:
		case <-ctx.Done():
			return nil, nil, context.Cause(ctx)
		}
		g.mu.Lock()
		if g.waiting == 0 {
			pctx, cancel := context.WithCancel(ctx)
			g.stop = cancel
			g.mu.Unlock()
			return pctx, func() {
				g.mu.Lock()
				g.stop = nil
				g.mu.Unlock()
				cancel()
				<-g.sem
			}, nil
		}
		g.mu.Unlock()
		<-g.sem // a job waits for it: let the job go first
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			return nil, nil, context.Cause(ctx)
		}
	}
}

// gates are the gates of the queues, by name, made on first use.
type gates struct {
	mu     sync.Mutex
	byName map[string]*gate
}

func (gs *gates) of(queue string) *gate {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.byName == nil {
		gs.byName = map[string]*gate{}
	}
	g := gs.byName[queue]
	if g == nil {
		g = newGate()
		gs.byName[queue] = g
	}
	return g
}

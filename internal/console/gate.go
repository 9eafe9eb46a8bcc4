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
	stop    context.CancelFunc // the pass holding it, to stop for a job
}

func newGate() *gate { return &gate{sem: make(chan struct{}, 1)} }

// holdForJob waits for the queue, stopping a pass that holds it, and
// returns the release.
func (g *gate) holdForJob(ctx context.Context) (release func(), err error) {
	g.mu.Lock()
	g.waiting++
	if g.stop != nil {
		g.stop()
	}
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.waiting--
		g.mu.Unlock()
	}()
	select {
	case g.sem <- struct{}{}:
		return func() { <-g.sem }, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
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

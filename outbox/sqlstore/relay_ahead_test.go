package sqlstore_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq-go/acemq/outbox"
	"github.com/acemq-go/acemq/transport"
)

// aheadWatcher is a store whose first mark waits, a bounded time, for a
// second claim to begin, and says whether it did.
type aheadWatcher struct {
	outbox.Store
	claims atomic.Int32
	second chan struct{}
	late   atomic.Bool
}

func (w *aheadWatcher) Claim(ctx context.Context, c outbox.Claim) ([]outbox.Record, error) {
	if w.claims.Add(1) == 2 {
		close(w.second)
	}
	return w.Store.Claim(ctx, c)
}

func (w *aheadWatcher) Published(ctx context.Context, ids []int64) error {
	select {
	case <-w.second:
	case <-time.After(10 * time.Second):
		w.late.Store(true)
	}
	return w.Store.Published(ctx, ids)
}

// Run claims the next batch while a full one is published, so that the
// claim's round trips overlap the publishes, and still publishes every
// record once, in order.
func TestRunClaimsTheNextBatchWhileOneIsPublished(t *testing.T) {
	eachBroker(t, func(t *testing.T, b *broker) {
		s := b.store(t)
		b.write(t, s, 0, 12)
		w := &aheadWatcher{Store: s, second: make(chan struct{})}
		r := relay(t, w, b.conn, outbox.WithBatchSize(5), outbox.WithPollInterval(10*time.Millisecond))
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		wg.Go(func() {
			if err := r.Run(ctx); err != nil {
				t.Error(err)
			}
		})
		waitLag(t, r, 0)
		cancel()
		wg.Wait()
		if w.late.Load() {
			t.Error("the first batch was marked before the next claim began")
		}
		if got := b.drain(t); strings.Join(got, " ") != strings.Join(numbers(0, 12), " ") {
			t.Errorf("the queue got %v", got)
		}
	})
}

// A relay stopped mid-batch releases the batch it claimed ahead too:
// another relay takes every record not sent at once.
func TestStopReleasesTheBatchClaimedAhead(t *testing.T) {
	eachBroker(t, func(t *testing.T, b *broker) {
		s := b.store(t)
		b.write(t, s, 0, 12)
		ctx, cancel := context.WithCancel(t.Context())
		var count atomic.Int32
		conn := b.connect(t, func(tr transport.Transport) transport.Transport {
			return cancelling{Transport: tr, n: 3, count: &count, cancel: cancel}
		})
		r := relay(t, s, conn, outbox.WithBatchSize(5))
		if err := r.Run(ctx); err != nil {
			t.Errorf("Run = %v", err)
		}
		once(t, relay(t, s, b.conn), outbox.Batch{Claimed: 9, Published: 9})
		if got := b.drain(t); strings.Join(got, " ") != strings.Join(numbers(0, 12), " ") {
			t.Errorf("the queue got %v", got)
		}
	})
}

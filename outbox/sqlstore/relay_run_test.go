package sqlstore_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/acemq-go/acemq/outbox"
	"github.com/acemq-go/acemq/transport"
)

// moreRecorder is a transport that records each publish's More.
type moreRecorder struct {
	transport.Transport
	mu   *sync.Mutex
	more *[]bool
}

func (m moreRecorder) Publish(ctx context.Context, p transport.Publishing) (*transport.Confirmation, error) {
	m.mu.Lock()
	*m.more = append(*m.more, p.More)
	m.mu.Unlock()
	return m.Transport.Publish(ctx, p)
}

// A batch goes out as one run of publishes: each but the last says that
// another follows (transport.Publishing.More), so that the transport may
// write them together, and every one is confirmed and marked.
func TestRelayPublishesABatchAsOneRun(t *testing.T) {
	eachBroker(t, func(t *testing.T, b *broker) {
		s := b.store(t)
		b.write(t, s, 0, 7)
		var mu sync.Mutex
		var more []bool
		conn := b.connect(t, func(tr transport.Transport) transport.Transport {
			return moreRecorder{Transport: tr, mu: &mu, more: &more}
		})
		r := relay(t, s, conn, outbox.WithBatchSize(5))
		once(t, r, outbox.Batch{Claimed: 5, Published: 5})
		once(t, r, outbox.Batch{Claimed: 2, Published: 2})
		once(t, r, outbox.Batch{})
		mu.Lock()
		got := slices.Clone(more)
		mu.Unlock()
		if want := []bool{true, true, true, true, false, true, false}; !slices.Equal(got, want) {
			t.Errorf("the publishes said More %v, want %v: all but each batch's last", got, want)
		}
		if got := b.drain(t); strings.Join(got, " ") != strings.Join(numbers(0, 7), " ") {
			t.Errorf("the queue got %v", got)
		}
	})
}

package console

import (
	"context"
	"sync"

	"github.com/acemq-go/acemq/deadletter"
	"github.com/acemq-go/acemq/transport"
)

// counted are the purges confirmed but not yet run: what each
// confirmation counted, by identity (deadletter.Identity), under a token
// its form carries. A purge removes those messages and no other.
type counted struct {
	mu      sync.Mutex
	byToken map[string]countedPurge
}

type countedPurge struct {
	queue string
	ids   map[string]int
}

func (c *counted) add(queue string, ids map[string]int) string {
	token := randomHex()[:16]
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byToken == nil {
		c.byToken = map[string]countedPurge{}
	}
	c.byToken[token] = countedPurge{queue, ids}
	return token
}

// take hands over a confirmation's count once.
func (c *counted) take(token, queue string) (map[string]int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.byToken[token]
	delete(c.byToken, token)
	return p.ids, ok && p.queue == queue
}

// countForPurge goes through queue (whose gate the caller holds) and
// counts its messages by identity: what a purge confirmed now may remove.
func (s *Server) countForPurge(ctx context.Context, queue string) (map[string]int, int, error) {
	ids, n := map[string]int{}, 0
	err := deadletter.Browse(ctx, s.c.Conn, queue, 0, func(m transport.Message) error {
		ids[deadletter.Identity(m)]++
		n++
		return nil
	})
	return ids, n, err
}

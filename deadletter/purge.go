package deadletter

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/transport"
)

// Identity names a message for a selection that must be exact (a purge of
// what a confirmation counted): its id (x-acemq-id, else the message id),
// else "body-sha256:" and the digest of its content type and body.
func Identity(m acemq.RawMessage) string {
	if id := acemq.ReadEnvelope(m).ID; id != "" {
		return id
	}
	h := sha256.New()
	h.Write([]byte(m.ContentType))
	h.Write([]byte{0})
	h.Write(m.Body)
	return "body-sha256:" + hex.EncodeToString(h.Sum(nil))
}

// MatchIdentities selects, of each Identity in counts, at most that many
// messages: the very messages counted before (two copies of one message
// count twice), and no other. It counts down as it selects, so it serves
// one run.
func MatchIdentities(counts map[string]int) *Matcher {
	left := make(map[string]int, len(counts))
	for id, n := range counts {
		if n > 0 {
			left[id] = n
		}
	}
	return &Matcher{source: fmt.Sprintf("identity in the %d counted", len(left)), counted: left}
}

// Purge deletes the messages of queue that o.Match selects (nil: every
// one), at most o.Limit of them, going through the queue as it stood when
// it started; the others stay in their places. With o.DryRun it counts
// them and deletes none. Unlike a purge of the broker's, which deletes
// whatever is ready when it arrives, it deletes only what was selected:
// with MatchIdentities, what a person was shown.
func Purge(ctx context.Context, c *acemq.Conn, queue string, o Options) (Progress, error) {
	p, err := fromQueue(ctx, c, queue, o, discard{}, false)
	if err != nil {
		return p, fmt.Errorf("purge %s: %w", queue, err)
	}
	return p, nil
}

// discard is a sink that has every message at once: the original's
// removal is the whole of a purge.
type discard struct{}

func (discard) send(context.Context, acemq.RawMessage) answer {
	c, resolve := transport.NewConfirmation()
	resolve(nil)
	return c
}

func (discard) flush() {}

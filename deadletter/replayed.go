package deadletter

import (
	"strings"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/lenient"
)

// Replayed records that an operator moved a message back from a dead-letter
// or parked queue (Replay writes it). Its headers are application headers,
// not reserved ones, so a handler sees them and a replay keeps the rest of
// the envelope untouched.
type Replayed struct {
	// From is the queue the replay took the message from.
	From string
	// At is when the message was replayed; the zero time means unknown.
	At time.Time
	// Count is how many times the message has been replayed.
	Count int
}

// ReadReplayed reads the replay headers of h, leniently: acemq-replayed-at
// may be an RFC 3339 string or epoch milliseconds, and a missing or
// unreadable value reads as the zero value.
func ReadReplayed(h acemq.Table) Replayed {
	r := Replayed{
		From: lenient.String(h[contract.HeaderReplayedFrom]),
		At:   readReplayedAt(h[contract.HeaderReplayedAt]),
	}
	if n, ok := lenient.Int(h[contract.HeaderReplayCount]); ok && n > 0 {
		r.Count = n
	}
	return r
}

// Write sets the replay headers in h, and removes those whose value is
// empty (From ""), unknown (At zero) or 0 (Count), so that h describes r
// exactly. h must not be nil unless r is the zero Replayed.
func (r Replayed) Write(h acemq.Table) {
	if r.From != "" {
		h[contract.HeaderReplayedFrom] = r.From
	} else {
		delete(h, contract.HeaderReplayedFrom)
	}
	if !r.At.IsZero() {
		h[contract.HeaderReplayedAt] = r.At.UTC().Format(contract.ReplayedAtLayout)
	} else {
		delete(h, contract.HeaderReplayedAt)
	}
	if r.Count > 0 {
		h[contract.HeaderReplayCount] = int64(r.Count)
	} else {
		delete(h, contract.HeaderReplayCount)
	}
}

// readReplayedAt reads an RFC 3339 string (any offset, any precision) or
// epoch milliseconds, as a number or a numeric string.
func readReplayedAt(v any) time.Time {
	if s := lenient.String(v); s != "" {
		if t, err := time.Parse(time.RFC3339, strings.TrimSpace(s)); err == nil {
			return t.UTC()
		}
	}
	return lenient.Millis(v)
}

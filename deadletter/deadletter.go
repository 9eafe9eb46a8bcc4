// Package deadletter deals with what ends in a source queue's dead-letter
// queue (Q.dlq) and parked queue (Q.parked): it shows the messages without
// taking them and says why each was set aside (ReasonOf), whether by an
// AceMQ library or by the broker itself, moves them back to their source
// (Replay) or on to the parked queue (Park), and exports them to a file and
// imports them back.
//
// A move never loses a message. Each one is published mandatory and
// confirmed before its original is acknowledged, so a refusal, a lost
// connection or an interruption leaves the original where it was: at worst
// a message ends up in both queues (at least once), never in neither.
// Messages a move leaves alone (not matching, or a dry run) stay in their
// places, in order.
//
// Operations go through a queue as it stood when they started: messages
// that arrive meanwhile (a replayed message that fails again, say) wait for
// the next run, so a run always ends.
package deadletter

import (
	"errors"
	"fmt"
	"strings"

	"github.com/acemq-go/acemq/contract"
)

var (
	// ErrSameQueue: a move from a queue into itself would go round forever.
	ErrSameQueue = errors.New("a queue cannot be moved into itself")
	// ErrNoSource: the queue's name ends in neither .dlq nor .parked, so its
	// source is not known; name the target.
	ErrNoSource = errors.New("the source queue is not known")
)

// The suffixes of CONTRACT.md section 1, from the functions that add them.
var (
	dlqSuffix    = contract.DeadLetterQueue("")
	parkedSuffix = contract.ParkedQueue("")
)

// Source is the source queue of a dead-letter or parked queue: "orders.new"
// for "orders.new.dlq" and "orders.new.parked". ok is false for any other
// name.
func Source(queue string) (source string, ok bool) {
	for _, suffix := range []string{dlqSuffix, parkedSuffix} {
		if s, found := strings.CutSuffix(queue, suffix); found && s != "" {
			return s, true
		}
	}
	return "", false
}

// IsDeadLetterQueue says whether queue is named as a Q.dlq.
func IsDeadLetterQueue(queue string) bool {
	s, ok := strings.CutSuffix(queue, dlqSuffix)
	return ok && s != ""
}

// Summary says in one line what an operation op ("replay", "park",
// "export", "import" or "purge") did to queue (for an import: its file), for a
// person: what moved, what was left in place, what may be in both places.
func Summary(op, queue string, dryRun bool, p Progress) string {
	var b strings.Builder
	done := map[string]string{"replay": "replayed", "park": "parked", "export": "exported", "import": "imported", "purge": "purged"}[op]
	if dryRun {
		done = "would " + op
	}
	fmt.Fprintf(&b, "%s: %s %d of the %d message%s taken", queue, done, p.Moved, p.Taken, plural(p.Taken))
	if p.Total > 0 {
		fmt.Fprintf(&b, " (the queue held %d)", p.Total)
	}
	fmt.Fprintf(&b, "; %d left in place", p.Left)
	if p.Doubtful > 0 {
		fmt.Fprintf(&b, "; %d may be in both places (their move's outcome was lost with the connection)", p.Doubtful)
	}
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

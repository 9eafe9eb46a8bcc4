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

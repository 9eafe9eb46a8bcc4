package acemq

import (
	"errors"
	"fmt"
	"time"

	"github.com/acemq-go/acemq/contract"
)

// Decision is what a handler makes of a message: Accept, Retry, Reject,
// Park or Requeue. The zero Decision is no decision at all; the consumer dead-letters
// such a message rather than guess.
type Decision struct {
	verdict verdict
	err     error
	after   time.Duration // RetryAfter's wait; 0 is the policy's
}

type verdict uint8

const (
	noVerdict verdict = iota
	accepted
	retried
	rejected
	parked
	requeued
)

// Accept acknowledges the message: it is done.
func Accept() Decision { return Decision{verdict: accepted} }

// Retry asks the retry policy for another attempt after a wait. An error
// marked with Fatal dead-letters the message at once instead.
func Retry(err error) Decision {
	return Decision{verdict: retried, err: orDefault(err, "retry requested")}
}

// RetryAfter asks for another attempt, as Retry does, after a wait of d
// that the handler chooses: a dependency's Retry-After, say. Only the wait
// differs: an error marked with Fatal still dead-letters the message at
// once, and the policy's attempts and maximum age still end it. d is
// bounded by the policy's longest wait (its maximum delay when it has one,
// else the longest wait of its schedule) and goes where any wait of its
// length goes: below the policy's broker wait threshold it is held in the
// consumer, jittered only upwards (never sooner than asked); from the
// threshold on, on the ladder's shortest rung at least d long (so 90s on a
// 40s/80s/160s ladder waits 160s), or its longest. A d of 0 or less is
// Retry(err): the policy's own wait.
func RetryAfter(d time.Duration, err error) Decision {
	r := Retry(err)
	r.after = max(d, 0)
	return r
}

// Reject dead-letters the message: it will never succeed. It lands in Q.dlq
// with err as its reason.
func Reject(err error) Decision { return Decision{verdict: rejected, err: orDefault(err, "rejected")} }

// Park sets the message aside in Q.parked for a person to look at.
func Park(err error) Decision { return Decision{verdict: parked, err: orDefault(err, "parked")} }

// Requeue puts the message back on its queue unchanged, its attempt not
// spent, after contract.RequeueDelay in the consumer: for a message that is
// not this consumer's to handle yet, such as one another consumer holds an
// idempotency claim on (package idempotency). The consumer publishes a copy
// to the queue, as it does for a set-aside whose republish failed, and acks
// the original once the copy is confirmed. No policy bounds it: a handler
// that returns it for ever keeps the message circulating for ever, so it is
// for a condition that ends by itself (a claim expires).
func Requeue(err error) Decision {
	return Decision{verdict: requeued, err: orDefault(err, "requeue requested")}
}

// Err is the error the decision carries; nil for Accept.
func (d Decision) Err() error { return d.err }

func (d Decision) String() string {
	switch d.verdict {
	case accepted:
		return "accept"
	case retried:
		if d.after > 0 {
			return fmt.Sprintf("retry after %s (%v)", contract.FormatDuration(d.after), d.err)
		}
		return fmt.Sprintf("retry (%v)", d.err)
	case rejected:
		return fmt.Sprintf("reject (%v)", d.err)
	case parked:
		return fmt.Sprintf("park (%v)", d.err)
	case requeued:
		return fmt.Sprintf("requeue (%v)", d.err)
	}
	return "no decision"
}

func orDefault(err error, text string) error {
	if err == nil {
		return errors.New(text)
	}
	return err
}

// fatalError marks an error that no retry can cure.
type fatalError struct{ err error }

func (e fatalError) Error() string { return e.err.Error() }
func (e fatalError) Unwrap() error { return e.err }

// Fatal marks err as one no retry can cure: Retry(Fatal(err)) dead-letters
// the message at once. The text of err is kept as it is.
func Fatal(err error) error {
	if err == nil {
		err = errors.New(contract.ReasonTextFatal)
	}
	return fatalError{err}
}

// IsFatal reports whether err, or an error it wraps, was marked with Fatal.
func IsFatal(err error) bool {
	_, fatal := errors.AsType[fatalError](err) // no target on the heap, as errors.As's would be
	return fatal
}

// temporaryError marks a codec's error that may pass.
type temporaryError struct{ err error }

func (e temporaryError) Error() string { return e.err.Error() }
func (e temporaryError) Unwrap() error { return e.err }

// Temporary marks a codec's Unmarshal error as one that may pass, such as a
// claim-check store out of reach: the consumer retries the message under its
// policy, as for Retry, instead of parking it; when the policy gives up, it
// is dead-lettered. Any other decoding error parks the message at once.
func Temporary(err error) error {
	if err == nil {
		return nil
	}
	return temporaryError{err}
}

// IsTemporary reports whether err, or an error it wraps, was marked with
// Temporary.
func IsTemporary(err error) bool {
	var t temporaryError
	return errors.As(err, &t)
}

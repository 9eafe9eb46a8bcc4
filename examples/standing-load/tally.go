package main

import (
	"math"
	"math/big"
	"sync"
	"time"
)

// tally counts what the load did, and accounts for each message by its
// number: which were confirmed, which consumed. Two bit sets (math/big's)
// hold that, a bit a message, so a load of 50 a second for a day holds
// about a megabyte; a map would grow with every message and read as a
// leak to the soak.
type tally struct {
	mu         sync.Mutex
	start      time.Time
	published  int64 // publishes attempted
	confirmed  int64 // confirmed by the broker
	consumed   int64 // distinct messages accepted by the consumer
	failed     int64 // publishes that failed, not refused: the connection closed first, no confirm in time
	refused    int64 // publishes the broker refused (a negative confirm) or blocked past their deadline
	reason     string
	retried    int64 // deliveries the handler failed on purpose, so that the ladder is used
	duplicates int64 // deliveries of a message accepted already (redelivered after a close)
	// outstanding are confirmed and not consumed yet: what a drain waits for.
	outstanding               int64
	wasConfirmed, wasConsumed big.Int
	// The last line and its time, for the next one's rates.
	last   line
	lastAt time.Time
}

func newTally(start time.Time) *tally { return &tally{start: start, lastAt: start} }

func (t *tally) publishing() {
	t.mu.Lock()
	t.published++
	t.mu.Unlock()
}

// confirm records that message n was confirmed.
func (t *tally) confirm(n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.confirmed++
	t.wasConfirmed.SetBit(&t.wasConfirmed, n, 1)
	if t.wasConsumed.Bit(n) == 0 {
		t.outstanding++
	}
}

// refuse records a publish the broker refused or blocked, and why.
func (t *tally) refuse(reason string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.refused++
	t.reason = reason
}

func (t *tally) fail() {
	t.mu.Lock()
	t.failed++
	t.mu.Unlock()
}

// blocked records the broker's reason for blocking the publisher's
// connection, seen before any publish failed for it.
func (t *tally) blocked(reason string) {
	t.mu.Lock()
	t.reason = reason
	t.mu.Unlock()
}

func (t *tally) retry() {
	t.mu.Lock()
	t.retried++
	t.mu.Unlock()
}

// consume records that message n was accepted; a message accepted before
// counts as a duplicate only.
func (t *tally) consume(n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.wasConsumed.Bit(n) == 1 {
		t.duplicates++
		return
	}
	t.consumed++
	t.wasConsumed.SetBit(&t.wasConsumed, n, 1)
	if t.wasConfirmed.Bit(n) == 1 {
		t.outstanding--
	}
}

// unconsumed is how many confirmed messages have not been consumed yet.
func (t *tally) unconsumed() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.outstanding
}

// extra are the counts the family's line has no field for: the debug
// address serves them.
type extra struct {
	Retried     int64 `json:"retried"`
	Duplicates  int64 `json:"duplicates"`
	Unconsumed  int64 `json:"unconsumed"`
	Goroutines  int   `json:"goroutines"`
	Connections int   `json:"connections"` // the load's two Conns' State().Connects: their first connections and every recovery since
}

func (t *tally) extra() extra {
	t.mu.Lock()
	defer t.mu.Unlock()
	return extra{Retried: t.retried, Duplicates: t.duplicates, Unconsumed: t.outstanding}
}

// line is one interval's line, in the family's fields and order; the
// package comment says what each one means.
type line struct {
	At          string  `json:"at"`
	ElapsedMs   int64   `json:"elapsedMs"`
	Blocked     bool    `json:"blocked"`
	Published   int64   `json:"published"`
	Confirmed   int64   `json:"confirmed"`
	Consumed    int64   `json:"consumed"`
	Failed      int64   `json:"failed"`
	PublishRate float64 `json:"publishRate"`
	ConsumeRate float64 `json:"consumeRate"`
	Refused     int64   `json:"refused"`
	Reason      string  `json:"reason"`
}

// timeFormat is RFC 3339 in UTC to the millisecond, which every language's
// reader parses.
const timeFormat = "2006-01-02T15:04:05.000Z07:00"

// next is the line of now: the counts so far, the rates since the line
// before.
func (t *tally) next(now time.Time, blocked bool) line {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := line{At: now.UTC().Format(timeFormat), ElapsedMs: now.Sub(t.start).Milliseconds(), Blocked: blocked,
		Published: t.published, Confirmed: t.confirmed, Consumed: t.consumed,
		Failed: t.failed, Refused: t.refused, Reason: t.reason}
	if secs := now.Sub(t.lastAt).Seconds(); secs > 0 {
		l.PublishRate = rate(l.Published-t.last.Published, secs)
		l.ConsumeRate = rate(l.Consumed-t.last.Consumed, secs)
	}
	t.last, t.lastAt = l, now
	return l
}

// rate is n per second over secs, to two decimals.
func rate(n int64, secs float64) float64 { return math.Round(float64(n)/secs*100) / 100 }

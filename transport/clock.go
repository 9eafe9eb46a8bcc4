package transport

import "time"

// Clock is a time source: SystemClock in production; tests drive a manual
// one (memory.ManualClock) so that a five-minute wait passes in an instant.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f once d has passed (SystemClock in a goroutine of
	// its own; a manual clock in the goroutine that advances it); stop
	// prevents the call and reports whether it did.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// SystemClock is real time.
var SystemClock Clock = systemClock{}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

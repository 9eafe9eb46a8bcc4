// Package contract is the AceMQ wire contract as data: the names, headers,
// queue arguments, content types, defaults, set-aside reasons and outcomes
// that every AceMQ library (Java, .NET, Python, Ruby, Go) agrees on, so that
// services written in any of them share queues. It is the one place these
// values are spelled; the rest of the module reads them from here, and
// docs/contract.md lists them for people, held to this package by a test.
//
// Where the family disagrees, or this library adds something of its own
// (at-least-once rungs), the value here is the one this library uses and
// docs/contract.md says which libraries it matches.
package contract

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The exchanges every AceMQ library declares (section 1).
const (
	// RetryExchange is where an expired message leaves its rung: a direct
	// exchange that routes it home under its source queue's name.
	RetryExchange = "acemq.retry"
	// DeadLetterExchange routes dead letters and parked messages to their
	// queues. Consumers always use it, even when a topology renames its own.
	DeadLetterExchange = "acemq.dlx"
)

// The suffixes and infixes of the queues a source queue Q has.
const (
	DeadLetterSuffix = ".dlq"
	ParkedSuffix     = ".parked"
	// RungInfix stands between the source and the delay in a contract
	// rung's name: Q.retry.40s.
	RungInfix = ".retry."
	// AtLeastOnceRungInfix names this library's at-least-once rungs, which
	// no other AceMQ library declares, so that the two kinds (a classic
	// and a quorum queue) never share a name: Q.retry.quorum.40s.
	AtLeastOnceRungInfix = ".retry.quorum."
)

// DeadLetterQueue names the queue for messages from source that used every
// attempt, grew too old or were rejected: "Q.dlq".
func DeadLetterQueue(source string) string { return source + DeadLetterSuffix }

// ParkedQueue names the queue for messages from source that a person must
// look at, most often ones that could not be decoded: "Q.parked".
func ParkedQueue(source string) string { return source + ParkedSuffix }

// RungKind is the kind of queue a ladder's rungs are, chosen per source
// queue.
type RungKind string

const (
	// ContractRungs are the rungs every AceMQ library declares (section 2):
	// classic queues named Q.retry.<delay>.
	ContractRungs RungKind = "contract"
	// AtLeastOnceRungs are this library's extension of the contract: quorum
	// queues named Q.retry.quorum.<delay> that dead-letter at least once.
	AtLeastOnceRungs RungKind = "at-least-once"

	// DefaultRungKind is the kind of rungs wherever none is chosen: the
	// only kind that loses no message when the broker restarts or a quorum
	// leader fails over, whatever the source queue's type (docs/retries.md).
	DefaultRungKind = AtLeastOnceRungs
)

// Infix is what stands between the source and the delay in a rung's name.
func (k RungKind) Infix() string {
	if k == AtLeastOnceRungs {
		return AtLeastOnceRungInfix
	}
	return RungInfix
}

// Other is the other kind of rungs: the one a ladder of k would stand
// beside, unawares, if the broker already had it.
func (k RungKind) Other() RungKind {
	if k == AtLeastOnceRungs {
		return ContractRungs
	}
	return AtLeastOnceRungs
}

// RungQueue names the rung of source, of kind k, for delay:
// "Q.retry.<delay>" or "Q.retry.quorum.<delay>", the delay rendered by
// RenderDelay.
func RungQueue(source string, delay time.Duration, k RungKind) string {
	return source + k.Infix() + RenderDelay(delay)
}

// RenderDelay writes a delay the way every AceMQ library names a rung: whole
// seconds (truncated), in hours or minutes when they divide evenly, and no day
// unit. 500ms is "0s", 90s is "90s", 5400s is "90m", 86400s is "24h".
func RenderDelay(d time.Duration) string {
	s := int64(d / time.Second)
	switch {
	case s <= 0:
		return "0s"
	case s%3600 == 0:
		return strconv.FormatInt(s/3600, 10) + "h"
	case s%60 == 0:
		return strconv.FormatInt(s/60, 10) + "m"
	default:
		return strconv.FormatInt(s, 10) + "s"
	}
}

// rungDelayPart is the delay part of a rung's name: whole seconds, minutes
// or hours, or milliseconds as the Java and .NET libraries name a sub-second
// or fractional wait.
var rungDelayPart = regexp.MustCompile(`^[0-9]+(ms|s|m|h)$`)

// RungName is a rung's name read back: its source queue, its kind and its
// delay as the name renders it ("40s", or "500ms" as Java names a rung).
type RungName struct {
	Source string
	Kind   RungKind
	Delay  string
}

// String is the queue name: "Q.retry.40s" or "Q.retry.quorum.40s".
func (n RungName) String() string { return n.Source + n.Kind.Infix() + n.Delay }

// ParseRungName reads a queue name as a rung of either kind:
// "orders.new.retry.40s" is a contract rung of orders.new,
// "orders.new.retry.quorum.40s" an at-least-once one. A name can be read
// more than one way ("a.retry.1s.retry.2s"); isSource picks the source among
// the candidates, leftmost first (nil accepts the first). ok is false when
// the name is no rung of a source isSource accepts.
func ParseRungName(name string, isSource func(string) bool) (n RungName, ok bool) {
	for i := strings.Index(name, RungInfix); i >= 0; {
		source := name[:i]
		for _, k := range []RungKind{AtLeastOnceRungs, ContractRungs} {
			delay, found := strings.CutPrefix(name[i:], k.Infix())
			if found && source != "" && rungDelayPart.MatchString(delay) && (isSource == nil || isSource(source)) {
				return RungName{Source: source, Kind: k, Delay: delay}, true
			}
		}
		j := strings.Index(name[i+1:], RungInfix)
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return RungName{}, false
}

// ParseRungKind reads "contract" or "at-least-once"; "" is DefaultRungKind.
func ParseRungKind(s string) (RungKind, error) {
	switch k := RungKind(s); k {
	case "":
		return DefaultRungKind, nil
	case ContractRungs, AtLeastOnceRungs:
		return k, nil
	}
	return "", fmt.Errorf("unknown kind of rungs %q: use %s (the AceMQ contract's classic rungs) or %s (quorum rungs that dead-letter at least once)",
		s, ContractRungs, AtLeastOnceRungs)
}

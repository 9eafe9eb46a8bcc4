package deadletter

import (
	"regexp"
	"strings"
)

// The parts of a reason's text that differ from one message to the next
// for the same failure, in the order they are folded: a UUID before the
// hex and numbers it is made of.
var (
	uuidPattern = regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	// hexPattern: 0x-prefixed, or a run of 6 or more hex digits with at
	// least one digit and one letter (a hash, an object id); "deadbeef"
	// and "123456" are left to the word and number rules; shorter runs too.
	hexPattern    = regexp.MustCompile(`(?i)\b0x[0-9a-f]+\b|\b(?:[0-9]+[a-f]|[a-f]+[0-9])[0-9a-f]*\b`)
	numberPattern = regexp.MustCompile(`[0-9]+`)
)

// ReasonTemplate is a reason's text with what varies from message to
// message folded: UUIDs to <uuid>, hex ids to <hex>, every run of digits
// (ids such as o-1042, counts, durations, addresses) to <n>. Reasons of one
// template are one failure: "panic: order 17: nil map" and "panic: order
// 18: nil map" are both "panic: order <n>: nil map".
func ReasonTemplate(text string) string {
	t := uuidPattern.ReplaceAllString(text, "<uuid>")
	t = hexPattern.ReplaceAllStringFunc(t, func(s string) string {
		if len(s) < 6 && !strings.HasPrefix(strings.ToLower(s), "0x") {
			return s
		}
		return "<hex>"
	})
	return numberPattern.ReplaceAllString(t, "<n>")
}

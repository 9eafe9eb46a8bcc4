package acemq

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// PolicyParseError is a malformed policy notation: where it went wrong and
// what was expected there.
type PolicyParseError struct {
	Input string
	// Pos is the 1-based character position of the problem.
	Pos int
	Msg string
}

func (e *PolicyParseError) Error() string {
	return fmt.Sprintf("retry policy %q: at position %d: %s", e.Input, e.Pos, e.Msg)
}

// Is makes a parse error match ErrInvalidPolicy.
func (e *PolicyParseError) Is(target error) bool { return target == ErrInvalidPolicy }

// ParsePolicy reads the notation shared by every AceMQ library:
//
//	none()
//	fixed(4, 30s)
//	exponential(5, 1s, 24h).giveUpAfter(2m).withJitter(0.1).waitInBrokerFrom(1m)
//
// Durations use Go's syntax. The policy read is validated; RetryPolicy.String
// writes one back.
func ParsePolicy(s string) (RetryPolicy, error) {
	p := &notationParser{input: s, runes: []rune(s)}
	policy, err := p.parse()
	if err != nil {
		return RetryPolicy{}, err
	}
	if err := policy.Validate(); err != nil {
		return RetryPolicy{}, err
	}
	return policy, nil
}

type notationParser struct {
	input string
	runes []rune
	pos   int // index into runes
}

func (p *notationParser) fail(pos int, format string, args ...any) error {
	return &PolicyParseError{Input: p.input, Pos: pos + 1, Msg: fmt.Sprintf(format, args...)}
}

func (p *notationParser) skipSpace() {
	for p.pos < len(p.runes) && unicode.IsSpace(p.runes[p.pos]) {
		p.pos++
	}
}

// found describes what is at the current position, for error messages.
func (p *notationParser) found() string {
	if p.pos >= len(p.runes) {
		return "the end"
	}
	return strconv.QuoteRune(p.runes[p.pos])
}

func (p *notationParser) expect(r rune, what string) error {
	p.skipSpace()
	if p.pos < len(p.runes) && p.runes[p.pos] == r {
		p.pos++
		return nil
	}
	return p.fail(p.pos, "expected %s, found %s", what, p.found())
}

func (p *notationParser) ident() (string, int) {
	p.skipSpace()
	start := p.pos
	for p.pos < len(p.runes) && (unicode.IsLetter(p.runes[p.pos]) || unicode.IsDigit(p.runes[p.pos])) {
		p.pos++
	}
	return string(p.runes[start:p.pos]), start
}

// rawArg is an argument's text and where it starts.
type rawArg struct {
	text string
	pos  int
}

// args reads "(arg, ...)".
func (p *notationParser) args() ([]rawArg, error) {
	if err := p.expect('(', "'('"); err != nil {
		return nil, err
	}
	var args []rawArg
	p.skipSpace()
	if p.pos < len(p.runes) && p.runes[p.pos] == ')' {
		p.pos++
		return nil, nil
	}
	for {
		p.skipSpace()
		start := p.pos
		for p.pos < len(p.runes) && !strings.ContainsRune(",()", p.runes[p.pos]) && !unicode.IsSpace(p.runes[p.pos]) {
			p.pos++
		}
		text := string(p.runes[start:p.pos])
		if text == "" {
			return nil, p.fail(start, "expected an argument, found %s", p.found())
		}
		args = append(args, rawArg{text, start})
		p.skipSpace()
		if p.pos >= len(p.runes) || (p.runes[p.pos] != ',' && p.runes[p.pos] != ')') {
			return nil, p.fail(p.pos, "expected ',' or ')', found %s", p.found())
		}
		p.pos++
		if p.runes[p.pos-1] == ')' {
			return args, nil
		}
	}
}

type argKind uint8

const (
	intArg argKind = iota
	durationArg
	floatArg
)

type parsedArgs struct {
	ints      []int
	durations []time.Duration
	floats    []float64
}

var factories = map[string][]argKind{
	"none":        {},
	"fixed":       {intArg, durationArg},
	"exponential": {intArg, durationArg, durationArg},
}

var modifiers = map[string][]argKind{
	"giveUpAfter":      {durationArg},
	"withJitter":       {floatArg},
	"waitInBrokerFrom": {durationArg},
}

const (
	factoryForms  = "none(), fixed(attempts, delay) or exponential(attempts, initial, max)"
	modifierForms = "giveUpAfter(age), withJitter(factor) or waitInBrokerFrom(threshold)"
)

// call reads the arguments of name and converts each to its kind.
func (p *notationParser) call(name string, namePos int, kinds []argKind) (parsedArgs, error) {
	raw, err := p.args()
	if err != nil {
		return parsedArgs{}, err
	}
	if len(raw) != len(kinds) {
		return parsedArgs{}, p.fail(namePos, "%s takes %d argument%s, found %d", name, len(kinds), plural(len(kinds)), len(raw))
	}
	var out parsedArgs
	for i, a := range raw {
		switch kinds[i] {
		case intArg:
			n, err := strconv.Atoi(a.text)
			if err != nil {
				return out, p.fail(a.pos, "expected a whole number of attempts, found %q", a.text)
			}
			out.ints = append(out.ints, n)
		case durationArg:
			d, err := time.ParseDuration(a.text)
			if err != nil {
				return out, p.fail(a.pos, "expected a duration such as 30s, 5m or 1h30m, found %q", a.text)
			}
			out.durations = append(out.durations, d)
		case floatArg:
			f, err := strconv.ParseFloat(a.text, 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return out, p.fail(a.pos, "expected a number from 0 to 1, found %q", a.text)
			}
			out.floats = append(out.floats, f)
		}
	}
	return out, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func (p *notationParser) parse() (RetryPolicy, error) {
	name, pos := p.ident()
	kinds, ok := factories[name]
	if !ok {
		if name == "" {
			return RetryPolicy{}, p.fail(pos, "expected %s, found %s", factoryForms, p.found())
		}
		return RetryPolicy{}, p.fail(pos, "unknown policy %q; expected %s", name, factoryForms)
	}
	a, err := p.call(name, pos, kinds)
	if err != nil {
		return RetryPolicy{}, err
	}
	var policy RetryPolicy
	switch name {
	case "none":
		policy = NoRetry()
	case "fixed":
		policy = Fixed(a.ints[0], a.durations[0])
	case "exponential":
		policy = Exponential(a.ints[0], a.durations[0], a.durations[1])
	}
	given := map[string]bool{}
	for {
		p.skipSpace()
		if p.pos >= len(p.runes) {
			return policy, nil
		}
		if p.runes[p.pos] != '.' {
			return RetryPolicy{}, p.fail(p.pos, "expected '.' and a modifier (%s) or the end, found %s", modifierForms, p.found())
		}
		p.pos++
		name, pos := p.ident()
		kinds, ok := modifiers[name]
		if !ok {
			if name == "" {
				return RetryPolicy{}, p.fail(pos, "expected a modifier (%s), found %s", modifierForms, p.found())
			}
			return RetryPolicy{}, p.fail(pos, "unknown modifier %q; expected %s", name, modifierForms)
		}
		if given[name] {
			return RetryPolicy{}, p.fail(pos, "%s is given twice", name)
		}
		given[name] = true
		a, err := p.call(name, pos, kinds)
		if err != nil {
			return RetryPolicy{}, err
		}
		switch name {
		case "giveUpAfter":
			policy = policy.GiveUpAfter(a.durations[0])
		case "withJitter":
			policy = policy.WithJitter(a.floats[0])
		case "waitInBrokerFrom":
			policy = policy.WaitInBrokerFrom(a.durations[0])
		}
	}
}

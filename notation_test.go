package acemq

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/acemq-go/acemq/internal/retry"
)

func TestParsePolicy(t *testing.T) {
	tests := []struct {
		in     string
		want   RetryPolicy
		string string // what String writes back
	}{
		{"none()", NoRetry(), "none()"},
		{"fixed(4, 30s)", Fixed(4, 30*sec), "fixed(4, 30s)"},
		{"exponential(5, 1s, 24h)", Exponential(5, sec, 24*hr), "exponential(5, 1s, 24h)"},
		{"exponential(5, 1s, 24h).giveUpAfter(2m)", Exponential(5, sec, 24*hr).GiveUpAfter(2 * minute),
			"exponential(5, 1s, 24h).giveUpAfter(2m)"},
		{"fixed(3, 500ms).withJitter(0.1)", Fixed(3, 500*ms).WithJitter(0.1), "fixed(3, 500ms).withJitter(0.1)"},
		{"exponential(6, 10s, 5m).waitInBrokerFrom(1m)", Exponential(6, 10*sec, 5*minute).WaitInBrokerFrom(minute),
			"exponential(6, 10s, 5m).waitInBrokerFrom(1m)"},
		{"  exponential( 6 ,10s,  1h30m ) . waitInBrokerFrom(0s) .withJitter(0) .giveUpAfter(1.5h)  ",
			Exponential(6, 10*sec, 90*minute).WaitInBrokerFrom(0).WithJitter(0).GiveUpAfter(90 * minute),
			"exponential(6, 10s, 1h30m).giveUpAfter(1h30m).withJitter(0).waitInBrokerFrom(0s)"},
		// defaults written out are dropped again
		{"exponential(3, 1s, 0s).withJitter(0.2).waitInBrokerFrom(30s)", Exponential(3, sec, 0), "exponential(3, 1s, 0s)"},
		{"fixed(2, 1m0s)", Fixed(2, minute), "fixed(2, 1m)"},
		{"none().giveUpAfter(1h)", NoRetry().GiveUpAfter(hr), "none().giveUpAfter(1h)"},
	}
	for _, tt := range tests {
		got, err := ParsePolicy(tt.in)
		if err != nil {
			t.Errorf("ParsePolicy(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("ParsePolicy(%q) = %#v, want %#v", tt.in, got, tt.want)
		}
		if s := got.String(); s != tt.string {
			t.Errorf("ParsePolicy(%q).String() = %q, want %q", tt.in, s, tt.string)
		}
		if again, err := ParsePolicy(got.String()); err != nil || again != got {
			t.Errorf("ParsePolicy(%q) = %v, %v; want the policy back", got.String(), again, err)
		}
	}
}

func TestParsePolicyErrors(t *testing.T) {
	tests := []struct {
		in   string
		pos  int // 0: not a parse error but a validation error
		want string
	}{
		{"", 1, "expected none(), fixed(attempts, delay) or exponential(attempts, initial, max), found the end"},
		{"   ", 4, "found the end"},
		{"bogus()", 1, `unknown policy "bogus"`},
		{"Fixed(4, 30s)", 1, `unknown policy "Fixed"`},
		{"fixed", 6, "expected '(', found the end"},
		{"fixed[4, 30s]", 6, "expected '(', found '['"},
		{"fixed(4 30s)", 9, "expected ',' or ')', found '3'"},
		{"fixed(4, 30s", 13, "expected ',' or ')', found the end"},
		{"fixed(4, )", 10, "expected an argument, found ')'"},
		{"fixed(, 30s)", 7, "expected an argument, found ','"},
		{"fixed(4)", 1, "fixed takes 2 arguments, found 1"},
		{"none(1)", 1, "none takes 0 arguments, found 1"},
		{"exponential(5, 1s)", 1, "exponential takes 3 arguments, found 2"},
		{"fixed(four, 30s)", 7, `expected a whole number of attempts, found "four"`},
		{"fixed(4.5, 30s)", 7, `expected a whole number of attempts, found "4.5"`},
		{"fixed(4, 30)", 10, `expected a duration such as 30s, 5m or 1h30m, found "30"`},
		{"fixed(4, 1d)", 10, `found "1d"`},
		{"fixed(4, 30s) x", 15, "expected '.' and a modifier"},
		{"fixed(4, 30s).", 15, "expected a modifier (giveUpAfter(age), withJitter(factor) or waitInBrokerFrom(threshold)), found the end"},
		{"fixed(4, 30s).retry(1)", 15, `unknown modifier "retry"`},
		{"fixed(4, 30s).withJitter(high)", 26, `expected a number from 0 to 1, found "high"`},
		{"fixed(4, 30s).withJitter(NaN)", 26, `expected a number from 0 to 1, found "NaN"`},
		{"fixed(4, 30s).withJitter(0.1).withJitter(0.2)", 31, "withJitter is given twice"},
		{"fixed(4, 30s).giveUpAfter((1m))", 27, "expected an argument, found '('"},
		{"fixed(ä, 30s)", 7, `found "ä"`},
		{"fixed(99999999999999999999, 1s)", 7, "expected a whole number of attempts"},
		// well formed, out of range
		{"fixed(0, 30s)", 0, "maxAttempts is 0 but must be from 1 to 10000"},
		{"fixed(3, -1s)", 0, "the initial delay is -1s but must be at least 0"},
		{"exponential(5, 1s, 24h).withJitter(1.5)", 0, "the jitter factor is 1.5 but must be from 0 to 1"},
	}
	for _, tt := range tests {
		_, err := ParsePolicy(tt.in)
		if !errors.Is(err, ErrInvalidPolicy) {
			t.Errorf("ParsePolicy(%q) = %v, want an ErrInvalidPolicy", tt.in, err)
			continue
		}
		var pe *PolicyParseError
		switch {
		case tt.pos == 0 && errors.As(err, &pe):
			t.Errorf("ParsePolicy(%q) = %v, want a validation error, not a parse error", tt.in, err)
		case tt.pos != 0 && !errors.As(err, &pe):
			t.Errorf("ParsePolicy(%q) = %v, want a *PolicyParseError", tt.in, err)
		case tt.pos != 0 && pe.Pos != tt.pos:
			t.Errorf("ParsePolicy(%q) position = %d, want %d (%v)", tt.in, pe.Pos, tt.pos, err)
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParsePolicy(%q) = %q, want it to say %q", tt.in, err, tt.want)
		}
	}
}

// Every valid policy built in Go is written in a notation that reads back
// to the same policy.
func TestPolicyStringRoundTrips(t *testing.T) {
	policies := []RetryPolicy{
		NoRetry(), Fixed(1, 0), Fixed(10_000, 1), Exponential(6, 10*sec, 0),
		Exponential(3, 1500*ms, 1900*ms).WaitInBrokerFrom(sec),
		Fixed(3, 1234567891*time.Nanosecond).WithJitter(1.0 / 3).GiveUpAfter(36*hr + 1),
		Exponential(20, 0, 0).WithJitter(1).WaitInBrokerFrom(0),
	}
	for _, p := range policies {
		got, err := ParsePolicy(p.String())
		if err != nil || got != p {
			t.Errorf("ParsePolicy(%q) = %v, %v; want %#v back", p.String(), got, err, p)
		}
	}
}

func FuzzParsePolicy(f *testing.F) {
	for _, seed := range []string{
		"none()", "fixed(4, 30s)", "exponential(5, 1s, 24h).giveUpAfter(2m)",
		"exponential(6, 10s, 5m).withJitter(0.1).waitInBrokerFrom(1m)", "fixed(4 30s)", "fixed(4, 30s).",
		"exponential(1e3, 1s, 1h)", "fixed(-1, -1s)", "fixed(4, 30s).withJitter(1e-300)", "fixed(2,9223372036s)",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		p, err := ParsePolicy(in)
		if err != nil {
			if !errors.Is(err, ErrInvalidPolicy) {
				t.Fatalf("ParsePolicy(%q) = %v, not an ErrInvalidPolicy", in, err)
			}
			var pe *PolicyParseError
			if errors.As(err, &pe) && (pe.Pos < 1 || pe.Pos > utf8.RuneCountInString(in)+1) {
				t.Fatalf("ParsePolicy(%q): position %d is outside the input", in, pe.Pos)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("ParsePolicy(%q) returned an invalid policy: %v", in, err)
		}
		again, err := ParsePolicy(p.String())
		if err != nil || again != p {
			t.Fatalf("ParsePolicy(%q) = %v, %v; want %v back", p.String(), again, err, p)
		}
		// Every retry decision of a valid policy is well formed.
		for a := 1; a <= min(p.MaxAttempts(), 50); a++ {
			d := retry.Decide(p, a, UnknownAge)
			if d.GivesUp() != (a >= p.MaxAttempts()) || d.Delay < 0 {
				t.Fatalf("%v.Decide(%d) = %+v", p, a, d)
			}
		}
	})
}

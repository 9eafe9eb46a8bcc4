package contract

import (
	"testing"
	"time"
)

func TestParseMaxAge(t *testing.T) {
	day := 24 * time.Hour
	for s, want := range map[string]time.Duration{
		"7D": 7 * day, "604800s": 7 * day, "168h": 7 * day, "10080m": 7 * day, "007D": 7 * day,
		"1Y": 365 * day, "1M": 30 * day,
	} {
		if got, ok := ParseMaxAge(s); !ok || got != want {
			t.Errorf("ParseMaxAge(%q) = %v, %t; want %v", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "D", "0s", "000D", "10ms", "1W", "-1D", "+1D", "1.5h", " 1D", "1d", "99999999999999999999s", "9223372036854775807Y"} {
		if got, ok := ParseMaxAge(s); ok {
			t.Errorf("ParseMaxAge(%q) = %v, true; want not an x-max-age", s, got)
		}
	}
	for _, d := range []time.Duration{time.Second, 90 * time.Second, time.Hour, 36 * time.Hour, 7 * day} {
		s, _ := RenderMaxAge(d)
		if got, ok := ParseMaxAge(s); !ok || got != d {
			t.Errorf("ParseMaxAge(RenderMaxAge(%v) = %q) = %v, %t", d, s, got, ok)
		}
	}
}

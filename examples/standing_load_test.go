package examples_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/internal/testing/brokertest"
)

// standingLoad is the example whose output varies from run to run (times,
// counters): TestExamples leaves it to TestStandingLoad, which holds it to
// the family's line format (CONTRACT.md section 22) instead of a docs block.
const standingLoad = "standing-load"

// familyFields are the fields of the family's standing load's JSON line,
// every one and no other, in this order.
var familyFields = []string{"at", "elapsedMs", "blocked", "published", "confirmed", "consumed",
	"failed", "publishRate", "consumeRate", "refused", "reason"}

// TestStandingLoad runs examples/standing-load for a few seconds, on
// memory:// and on the test broker: every line it prints is the family's
// (exactly its fields, each of the type a reader of another language
// expects), its counters move, and it exits 0, which it does only when
// every confirmed message was consumed.
func TestStandingLoad(t *testing.T) {
	bin := build(t, standingLoad)
	flags := flagsOf(t, bin)
	for _, f := range []string{"broker", "interval", "rate", "name", "debug"} {
		if !flags[f] {
			t.Errorf("examples/%s takes no -%s flag", standingLoad, f)
		}
	}
	check := func(t *testing.T, broker string) {
		out := runFor(t, bin, 3, "-broker", broker, "-interval", "250ms")
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) < 4 {
			t.Fatalf("%d lines in 3s at a 250ms interval, want at least 4:\n%s", len(lines), out)
		}
		var first, last loadLine
		for i, l := range lines {
			got, err := parseLoadLine(l)
			if err != nil {
				t.Fatalf("line %d: %v\n%s", i+1, err, l)
			}
			if i == 0 {
				first = got
			}
			last = got
		}
		if last.Published <= first.Published || last.Consumed <= first.Consumed {
			t.Errorf("the counters did not move: first line %+v, last %+v", first, last)
		}
		if last.Consumed < last.Confirmed {
			t.Errorf("the last line, after the drain, counts %d consumed of %d confirmed", last.Consumed, last.Confirmed)
		}
	}
	t.Run("memory", func(t *testing.T) { check(t, "memory://") })
	t.Run("broker", func(t *testing.T) { check(t, brokertest.URL(t)) })
}

// runFor runs the standing load with ACEMQ_EXAMPLE_SECONDS=seconds and
// returns its stdout; a non-zero exit fails t, with its stderr.
func runFor(t *testing.T, bin string, seconds int, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("ACEMQ_EXAMPLE_SECONDS=%d", seconds))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("%s did not end within %s\nstdout:\n%s\nstderr:\n%s", standingLoad, runTimeout, &stdout, &stderr)
	}
	if err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", standingLoad, err, &stdout, &stderr)
	}
	return stdout.String()
}

// loadLine is what TestStandingLoad compares between lines.
type loadLine struct{ Published, Confirmed, Consumed int64 }

// parseLoadLine checks one line against the family's format: a JSON object
// with exactly familyFields, in that order; at an RFC 3339 time; elapsedMs
// and the counters integers; the rates numbers; blocked a boolean; reason
// a string.
func parseLoadLine(line string) (loadLine, error) {
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return loadLine{}, fmt.Errorf("not a JSON object (%v)", err)
	}
	var keys []string
	values := map[string]any{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return loadLine{}, err
		}
		key := tok.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return loadLine{}, fmt.Errorf("%s: %v", key, err)
		}
		keys, values[key] = append(keys, key), v
	}
	if !slices.Equal(keys, familyFields) {
		return loadLine{}, fmt.Errorf("fields %v, want exactly %v", keys, familyFields)
	}
	integer := func(key string) (int64, error) {
		n, ok := values[key].(json.Number)
		if !ok {
			return 0, fmt.Errorf("%s is %T, want an integer", key, values[key])
		}
		i, err := n.Int64()
		if err != nil || i < 0 {
			return 0, fmt.Errorf("%s is %s, want an integer, at least 0", key, n)
		}
		return i, nil
	}
	var got loadLine
	counters := map[string]*int64{"elapsedMs": new(int64), "published": &got.Published, "confirmed": &got.Confirmed,
		"consumed": &got.Consumed, "failed": new(int64), "refused": new(int64)}
	for key, into := range counters {
		i, err := integer(key)
		if err != nil {
			return loadLine{}, err
		}
		*into = i
	}
	for _, key := range []string{"publishRate", "consumeRate"} {
		n, ok := values[key].(json.Number)
		if _, err := n.Float64(); !ok || err != nil {
			return loadLine{}, fmt.Errorf("%s is %v, want a number", key, values[key])
		}
	}
	at, ok := values["at"].(string)
	if _, err := time.Parse(time.RFC3339, at); !ok || err != nil {
		return loadLine{}, fmt.Errorf("at is %v, want an RFC 3339 time", values["at"])
	}
	if _, ok := values["blocked"].(bool); !ok {
		return loadLine{}, fmt.Errorf("blocked is %v, want a boolean", values["blocked"])
	}
	if _, ok := values["reason"].(string); !ok {
		return loadLine{}, fmt.Errorf("reason is %v, want a string", values["reason"])
	}
	return got, nil
}

func TestParseLoadLine(t *testing.T) {
	good := `{"at":"2026-12-07T01:02:03.456Z","elapsedMs":1000,"blocked":false,"published":50,"confirmed":50,` +
		`"consumed":49,"failed":0,"publishRate":50.2,"consumeRate":49,"refused":0,"reason":""}`
	if _, err := parseLoadLine(good); err != nil {
		t.Fatalf("the family's line: %v", err)
	}
	for _, c := range []struct{ what, from, to string }{
		{"a field more", `"reason":""}`, `"reason":"","extra":1}`},
		{"a field less", `,"reason":""}`, `}`},
		{"another order", `"blocked":false,"published":50`, `"published":50,"blocked":false`},
		{"a counter not an integer", `"published":50,`, `"published":50.5,`},
		{"a counter a string", `"consumed":49,`, `"consumed":"49",`},
		{"a rate a string", `"publishRate":50.2`, `"publishRate":"50.2"`},
		{"at not RFC 3339", `"2026-12-07T01:02:03.456Z"`, `"07/12/2026 01:02"`},
		{"blocked a string", `"blocked":false`, `"blocked":"false"`},
		{"reason null", `"reason":""`, `"reason":null`},
	} {
		if _, err := parseLoadLine(strings.Replace(good, c.from, c.to, 1)); err == nil {
			t.Errorf("%s: accepted", c.what)
		}
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

const reference = "../../examples/topology.yaml"

type result struct {
	stdout, stderr string
	code           int
}

// run runs acemq with args, as the shell would, with stdin as its input.
func run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := execute(t.Context(), args, strings.NewReader(stdin), &stdout, &stderr)
	return result{stdout.String(), stderr.String(), code}
}

func TestGolden(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		stdin string
	}{
		{"ladder", []string{"ladder", "orders.new", "--policy", "exponential(6, 10s, 5m)"}, ""},
		{"ladder-attempt-1", []string{"ladder", "orders.new", "--policy", "exponential(6, 10s, 5m)", "--attempt", "1"}, ""},
		{"ladder-attempt-3", []string{"ladder", "orders.new", "--policy", "exponential(6, 10s, 5m)", "--attempt", "3"}, ""},
		{"ladder-attempt-6", []string{"ladder", "orders.new", "--policy", "exponential(6, 10s, 5m)", "--attempt", "6"}, ""},
		{"ladder-too-old", []string{"ladder", "orders.new", "--policy", "exponential(5, 1s, 24h).giveUpAfter(2m)", "--attempt", "2", "--age", "3m"}, ""},
		{"ladder-threshold-0", []string{"ladder", "q", "--policy", "fixed(3, 1m).withJitter(0.5)", "--threshold", "0", "--attempt", "1", "--age", "10s"}, ""},
		{"ladder-threshold-1m", []string{"ladder", "q", "--policy", "exponential(6, 10s, 5m).waitInBrokerFrom(5s)", "--threshold", "1m"}, ""},
		{"ladder-none", []string{"ladder", "q", "--policy", "none()", "--attempt", "1"}, ""},
		{"ladder-fixed-no-jitter", []string{"ladder", "q", "--policy", "fixed(4, 10s)", "--attempt", "9"}, ""},
		{"ladder-zero-wait", []string{"ladder", "q", "--policy", "fixed(3, 0s)", "--attempt", "1"}, ""},
		{"ladder-warnings", []string{"ladder", "q", "--policy", "exponential(5, 1500ms, 1m).waitInBrokerFrom(1s)"}, ""},
		{"ladder-json", []string{"ladder", "orders.new", "--policy", "exponential(6, 10s, 5m)", "--json"}, ""},
		{"ladder-contract", []string{"ladder", "orders.new", "--policy", "exponential(6, 10s, 5m)", "--rungs", "contract", "--attempt", "4"}, ""},
		{"ladder-json-contract", []string{"ladder", "orders.new", "--policy", "exponential(6, 10s, 5m)", "--rungs", "contract", "--json"}, ""},
		{"ladder-bad-rungs", []string{"ladder", "q", "--policy", "none()", "--rungs", "quorum"}, ""},
		{"ladder-json-attempt-3", []string{"ladder", "orders.new", "--policy", "exponential(6, 10s, 5m)", "--attempt", "3", "--json"}, ""},
		{"ladder-bad-policy", []string{"ladder", "q", "--policy", "exponential(6, 10s)"}, ""},
		{"ladder-invalid-policy", []string{"ladder", "q", "--policy", "fixed(2, 1s)", "--threshold", "-1s"}, ""},
		{"ladder-no-policy", []string{"ladder", "q"}, ""},
		{"ladder-no-queue", []string{"ladder", "--policy", "none()"}, ""},
		{"ladder-age-without-attempt", []string{"ladder", "q", "--policy", "none()", "--age", "1m"}, ""},
		{"ladder-attempt-0", []string{"ladder", "q", "--policy", "none()", "--attempt", "0"}, ""},
		{"ladder-bad-flag", []string{"ladder", "q", "--policy", "none()", "--attempt", "three"}, ""},

		{"plan", []string{"topology", "plan", "-f", reference}, ""},
		{"plan-json", []string{"topology", "plan", "-f", reference, "--json"}, ""},
		{"plan-default-rungs", []string{"topology", "plan", "-f", "-"}, "queues: [{name: orders.new, type: quorum, retry: \"exponential(6, 10s, 5m)\"}]\n"},
		{"plan-contract", []string{"topology", "plan", "-f", "-"}, "queues:\n  - name: q\n    retry: fixed(3, 1m)\n    rungs: contract\n"},
		{"plan-rungs-without-retry", []string{"topology", "plan", "-f", "-"}, "queues:\n  - name: q\n    rungs: at-least-once\n"},
		{"plan-stdin", []string{"topology", "plan", "-f", "-"}, "exchanges: [{name: x, type: fanout, durable: false}]\nqueues: [{name: q, durable: false, bindings: [{exchange: x}]}]\n"},
		{"plan-stdin-bad", []string{"topology", "plan", "-f", "-"}, "queues:\n  - name: q\n    bindings: [{exchange: x, key: a}]\n"},
		{"diff-stdin-bad", []string{"topology", "diff", "-f", "-"}, "queues:\n  - name: q\n    bindings: [{exchange: x, key: a}]\n"},
		{"plan-invalid", []string{"topology", "plan", "-f", "testdata/invalid.yaml"}, ""},
		{"plan-invalid-json", []string{"topology", "plan", "-f", "testdata/invalid.yaml", "--json"}, ""},
		{"plan-unknown-key", []string{"topology", "plan", "-f", "testdata/unknown-key.yaml"}, ""},
		{"plan-missing-file", []string{"topology", "plan", "-f", "testdata/missing.yaml"}, ""},
		{"plan-no-file", []string{"topology", "plan"}, ""},
		{"topology-unknown", []string{"topology", "deploy"}, ""},
		// The acemq package's error starts with "acemq: " already: one prefix.
		{"dlq-show-bad-scheme", []string{"dlq", "show", "q.dlq", "--url", "ftp://h/"}, ""},
		{"unknown-command", []string{"lader"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.stdin, tt.args...)
			wantGolden(t, tt.name, fmt.Sprintf("$ acemq %s\nexit %d\n-- stdout --\n%s-- stderr --\n%s", shellJoin(tt.args), r.code, r.stdout, r.stderr))
		})
	}
}

// wantGolden compares got with testdata/NAME.golden, or with -update
// writes it there.
func wantGolden(t *testing.T, name, got string) {
	t.Helper()
	golden := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it)\n--- got\n%s\n--- want\n%s", golden, got, want)
	}
}

func shellJoin(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " ()*'\"$") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		quoted[i] = a
	}
	return strings.Join(quoted, " ")
}

func TestExitCodes(t *testing.T) {
	tests := []struct {
		args       []string
		code       int
		usage      bool   // the command's usage follows the error
		stderrHead string // stderr starts so
	}{
		{[]string{"ladder", "q", "--policy", "none()"}, exitOK, false, ""},
		// The reference queue is quorum with the default rungs: no warning.
		{[]string{"topology", "plan", "-f", reference}, exitOK, false, ""},
		// A quorum queue with contract rungs: valid, with a warning.
		{[]string{"topology", "plan", "-f", "testdata/contract-rungs.yaml"}, exitOK, false, "acemq: warning: queue 1 (\"orders.new\"): a quorum queue with contract rungs"},
		{[]string{"version"}, exitOK, false, ""},
		{[]string{"topology", "plan", "-f", "testdata/invalid.yaml"}, exitInvalid, false, "acemq: invalid topology\n  - "},
		{[]string{"topology", "plan", "-f", "testdata/invalid.yaml", "--json"}, exitInvalid, false, ""},
		{[]string{"topology", "plan", "-f", "testdata/unknown-key.yaml"}, exitFailure, false, "acemq: topology file "},
		{[]string{"topology", "plan", "-f", "testdata/unknown-key.yaml", "--json"}, exitFailure, false, "acemq: topology file "},
		{[]string{"topology", "plan", "-f", "testdata/missing.yaml"}, exitFailure, false, "acemq: topology file: open "},
		{[]string{"ladder", "q", "--policy", "nonsense"}, exitFailure, false, "acemq: retry policy "},
		{[]string{"ladder", "q"}, exitFailure, true, "acemq: required flag"},
		{[]string{"ladder", "q", "--policy", "none()", "--bogus"}, exitFailure, true, "acemq: unknown flag: --bogus"},
		{[]string{"topology", "plan", "-f", reference, "extra"}, exitFailure, true, "acemq: unknown command \"extra\""},
		{[]string{"version", "extra"}, exitFailure, true, "acemq: unknown command \"extra\""},
		{[]string{"nonsense"}, exitFailure, true, "acemq: unknown command \"nonsense\""},
		{[]string{"demo", "--url", "ftp://h/"}, exitFailure, false, "acemq: connect to ftp://h/: the scheme \"ftp\" is not supported"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := run(t, "", tt.args...)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", r.code, tt.code, r.stderr)
			}
			if !strings.HasPrefix(r.stderr, tt.stderrHead) || (tt.stderrHead == "" && r.stderr != "") {
				t.Errorf("stderr %q does not start with %q", r.stderr, tt.stderrHead)
			}
			if hasUsage := strings.Contains(r.stderr, "Usage:"); hasUsage != tt.usage {
				t.Errorf("usage shown: %v, want %v; stderr:\n%s", hasUsage, tt.usage, r.stderr)
			}
			if tt.code != exitOK && strings.Contains(r.stdout, "Usage:") {
				t.Errorf("usage went to stdout:\n%s", r.stdout)
			}
		})
	}
}

// Every error line starts with "acemq: " once, whether or not the error
// already names the package, and whoever returns it.
func TestErrorLine(t *testing.T) {
	lib := errors.New("acemq: connect to ftp://h/: the scheme \"ftp\" is not supported")
	tests := []struct {
		err  error
		want string
	}{
		{errors.New("--limit must be 0 (all) or more, found -1"), "acemq: --limit must be 0 (all) or more, found -1"},
		{lib, lib.Error()},
		{&runError{lib}, lib.Error()},
		{&exitError{code: exitFailure, err: lib}, lib.Error()},
		{errors.New("invalid topology\n  - a\n"), "acemq: invalid topology\n  - a"},
	}
	for _, tt := range tests {
		if got := errorLine(tt.err); got != tt.want {
			t.Errorf("errorLine(%q) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

// newRootCmd works on its own: it writes where it is told and leaves
// printing errors to its caller.
func TestNewRootCmd(t *testing.T) {
	var stdout, stderr bytes.Buffer
	cmd := newRootCmd(&stdout, &stderr)
	cmd.SetArgs([]string{"ladder", "orders.new", "--policy", "fixed(3, 1m)"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "orders.new.retry.quorum.1m") || stderr.Len() != 0 {
		t.Errorf("stdout:\n%s\nstderr:\n%s", &stdout, &stderr)
	}

	stdout.Reset()
	cmd = newRootCmd(&stdout, &stderr)
	cmd.SetArgs([]string{"ladder", "q", "--policy", "nonsense"})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), `unknown policy "nonsense"`) {
		t.Errorf("error %v, want the policy's", err)
	}
	if stdout.Len() != 0 || stderr.Len() != 0 {
		t.Errorf("newRootCmd printed on error; stdout:\n%s\nstderr:\n%s", &stdout, &stderr)
	}
}

func TestVersion(t *testing.T) {
	r := run(t, "", "version")
	if !regexp.MustCompile(`^acemq (\(devel\)|v\S+)\n$`).MatchString(r.stdout) || r.code != exitOK {
		t.Errorf("acemq version: exit %d, %q", r.code, r.stdout)
	}
}

// decodeJSON reads one JSON object of stdout, numbers as json.Number.
func decodeJSON(t *testing.T, stdout string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("stdout is not a JSON object: %v\n%s", err, stdout)
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one JSON value:\n%s", stdout)
	}
	return v
}

func keys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

// The ladder of the contract's reference queue, as every AceMQ library
// declares it (CONTRACT.md sections 2, 4 and 5).
func TestLadderJSONReference(t *testing.T) {
	r := run(t, "", "ladder", "orders.new", "--policy", "exponential(6, 10s, 5m)", "--rungs", "contract", "--json")
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	out := decodeJSON(t, r.stdout)

	wantKeys := []string{"declarations", "policy", "rungKind", "rungs", "scheduleMillis", "source", "thresholdMillis", "warnings"}
	if got := keys(out); !reflect.DeepEqual(got, wantKeys) {
		t.Errorf("keys %v, want %v", got, wantKeys)
	}
	if out["source"] != "orders.new" || out["policy"] != "exponential(6, 10s, 5m)" || out["thresholdMillis"] != json.Number("30000") {
		t.Errorf("source %v, policy %v, thresholdMillis %v", out["source"], out["policy"], out["thresholdMillis"])
	}
	if out["rungKind"] != "contract" {
		t.Errorf("rungKind %v, want contract", out["rungKind"])
	}
	wantSchedule := []any{json.Number("10000"), json.Number("20000"), json.Number("40000"), json.Number("80000"), json.Number("160000")}
	if !reflect.DeepEqual(out["scheduleMillis"], wantSchedule) {
		t.Errorf("scheduleMillis %v, want %v", out["scheduleMillis"], wantSchedule)
	}
	if w, ok := out["warnings"].([]any); !ok || len(w) != 0 {
		t.Errorf("warnings %#v, want []", out["warnings"])
	}

	rungs, _ := out["rungs"].([]any)
	wantRungs := []struct {
		queue string
		ms    json.Number
	}{{"orders.new.retry.40s", "40000"}, {"orders.new.retry.80s", "80000"}, {"orders.new.retry.160s", "160000"}}
	if len(rungs) != len(wantRungs) {
		t.Fatalf("%d rungs, want %d: %v", len(rungs), len(wantRungs), out["rungs"])
	}
	for i, want := range wantRungs {
		rung := rungs[i].(map[string]any)
		if got := keys(rung); !reflect.DeepEqual(got, []string{"arguments", "delayMillis", "queue"}) {
			t.Errorf("rung %d keys %v", i, got)
		}
		if rung["queue"] != want.queue || rung["delayMillis"] != want.ms {
			t.Errorf("rung %d is %v after %v, want %s after %s", i, rung["queue"], rung["delayMillis"], want.queue, want.ms)
		}
		wantArgs := map[string]any{
			"x-message-ttl":             want.ms, // a number, not a string
			"x-dead-letter-exchange":    "acemq.retry",
			"x-dead-letter-routing-key": "orders.new",
		}
		if !reflect.DeepEqual(rung["arguments"], wantArgs) {
			t.Errorf("rung %s arguments %v, want exactly %v", want.queue, rung["arguments"], wantArgs)
		}
	}

	type decl = map[string]any
	rungQueue := func(name, ms string) decl {
		return decl{"kind": "queue", "name": name, "type": "classic", "durable": true, "exclusive": false, "autoDelete": false,
			"arguments": map[string]any{"x-message-ttl": json.Number(ms), "x-dead-letter-exchange": "acemq.retry", "x-dead-letter-routing-key": "orders.new"}}
	}
	plainQueue := func(name string) decl {
		return decl{"kind": "queue", "name": name, "type": "classic", "durable": true, "exclusive": false, "autoDelete": false,
			"arguments": map[string]any{}}
	}
	binding := func(queue, exchange, key string) decl {
		return decl{"kind": "binding", "queue": queue, "exchange": exchange, "routingKey": key}
	}
	exchange := func(name string) decl {
		return decl{"kind": "exchange", "name": name, "type": "direct", "durable": true}
	}
	want := []any{
		exchange("acemq.retry"),
		rungQueue("orders.new.retry.40s", "40000"),
		rungQueue("orders.new.retry.80s", "80000"),
		rungQueue("orders.new.retry.160s", "160000"),
		binding("orders.new", "acemq.retry", "orders.new"),
		exchange("acemq.dlx"),
		plainQueue("orders.new.dlq"),
		binding("orders.new.dlq", "acemq.dlx", "orders.new.dlq"),
		plainQueue("orders.new.parked"),
		binding("orders.new.parked", "acemq.dlx", "orders.new.parked"),
	}
	got, _ := out["declarations"].([]any)
	if len(got) != len(want) {
		t.Fatalf("%d declarations, want %d:\n%v", len(got), len(want), out["declarations"])
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("declaration %d\n got %v\nwant %v", i+1, got[i], want[i])
		}
	}
}

func TestLadderJSONDecision(t *testing.T) {
	const reference = "exponential(6, 10s, 5m)"
	tests := []struct {
		name   string
		policy string
		args   []string
		want   map[string]any
	}{
		{"a short wait is the consumer's", reference, []string{"--attempt", "1"},
			map[string]any{"attempt": json.Number("1"), "outcome": "retried_in_consumer", "reasonClass": "retry", "retries": true, "delayMillis": json.Number("10000"),
				"minWaitMillis": json.Number("8000"), "maxWaitMillis": json.Number("12000"), "waitsIn": "consumer"}},
		{"a long wait is a rung's", reference, []string{"--attempt", "3"},
			map[string]any{"attempt": json.Number("3"), "outcome": "retried_on_rung", "reasonClass": "retry", "retries": true, "delayMillis": json.Number("40000"),
				"minWaitMillis": json.Number("40000"), "maxWaitMillis": json.Number("40000"), "waitsIn": "rung", "rung": "orders.new.retry.quorum.40s"}},
		{"the last retry", reference, []string{"--attempt", "5", "--age", "1h"},
			map[string]any{"attempt": json.Number("5"), "outcome": "retried_on_rung", "reasonClass": "retry", "retries": true, "delayMillis": json.Number("160000"),
				"minWaitMillis": json.Number("160000"), "maxWaitMillis": json.Number("160000"), "waitsIn": "rung", "rung": "orders.new.retry.quorum.160s"}},
		{"exhausted", reference, []string{"--attempt", "6"},
			map[string]any{"attempt": json.Number("6"), "outcome": "dead_lettered", "reasonClass": "exhausted", "retries": false, "reason": "exhausted 6 attempts"}},
		{"past the last attempt", reference, []string{"--attempt", "60"},
			map[string]any{"attempt": json.Number("60"), "outcome": "dead_lettered", "reasonClass": "exhausted", "retries": false, "reason": "exhausted 6 attempts"}},
		{"too old", "exponential(5, 1s, 24h).giveUpAfter(2m)", []string{"--attempt", "2", "--age", "3m"},
			map[string]any{"attempt": json.Number("2"), "outcome": "dead_lettered", "reasonClass": "too_old", "retries": false, "reason": "exceeded the maximum message age of 2m"}},
		{"an unknown age is young", "exponential(5, 1s, 24h).giveUpAfter(2m)", []string{"--attempt", "2"},
			map[string]any{"attempt": json.Number("2"), "outcome": "retried_in_consumer", "reasonClass": "retry", "retries": true, "delayMillis": json.Number("2000"),
				"minWaitMillis": json.Number("1600"), "maxWaitMillis": json.Number("2400"), "waitsIn": "consumer"}},
		{"a wait of zero is 1ms in the consumer", "fixed(3, 0s)", []string{"--attempt", "1"},
			map[string]any{"attempt": json.Number("1"), "outcome": "retried_in_consumer", "reasonClass": "retry", "retries": true, "delayMillis": json.Number("0"),
				"minWaitMillis": json.Number("1"), "maxWaitMillis": json.Number("1"), "waitsIn": "consumer"}},
		{"full jitter is floored at 1ms", "fixed(3, 10s).withJitter(1)", []string{"--attempt", "1"},
			map[string]any{"attempt": json.Number("1"), "outcome": "retried_in_consumer", "reasonClass": "retry", "retries": true, "delayMillis": json.Number("10000"),
				"minWaitMillis": json.Number("1"), "maxWaitMillis": json.Number("20000"), "waitsIn": "consumer"}},
		{"a jittered wait is not whole milliseconds", "exponential(3, 1001ms, 0s)", []string{"--attempt", "1"},
			map[string]any{"attempt": json.Number("1"), "outcome": "retried_in_consumer", "reasonClass": "retry", "retries": true, "delayMillis": json.Number("1001"),
				"minWaitMillis": json.Number("800.8"), "maxWaitMillis": json.Number("1201.2"), "waitsIn": "consumer"}},
		{"threshold 0 keeps waits in the consumer", reference, []string{"--attempt", "5", "--threshold", "0"},
			map[string]any{"attempt": json.Number("5"), "outcome": "retried_in_consumer", "reasonClass": "retry", "retries": true, "delayMillis": json.Number("160000"),
				"minWaitMillis": json.Number("128000"), "maxWaitMillis": json.Number("192000"), "waitsIn": "consumer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"ladder", "orders.new", "--policy", tt.policy, "--json"}, tt.args...)
			r := run(t, "", args...)
			if r.code != exitOK {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			out := decodeJSON(t, r.stdout)
			if !reflect.DeepEqual(out["decision"], tt.want) {
				t.Errorf("decision\n got %v\nwant %v", out["decision"], tt.want)
			}
		})
	}
}

func TestPlanJSON(t *testing.T) {
	r := run(t, "", "topology", "plan", "-f", reference, "--json")
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	out := decodeJSON(t, r.stdout)
	if got := keys(out); !reflect.DeepEqual(got, []string{"declarations", "warnings"}) {
		t.Errorf("keys %v, want [declarations warnings]", got)
	}
	if w, ok := out["warnings"].([]any); !ok || len(w) != 0 {
		t.Errorf("warnings %#v, want []: the default rungs lose nothing", out["warnings"])
	}
	contractOut := decodeJSON(t, run(t, "", "topology", "plan", "-f", "testdata/contract-rungs.yaml", "--json").stdout)
	if w, _ := contractOut["warnings"].([]any); len(w) != 1 || !strings.Contains(fmt.Sprint(w[0]), "a quorum queue with contract rungs") {
		t.Errorf("warnings %v, want the one about the quorum queue's contract rungs", contractOut["warnings"])
	}
	var got []string
	for _, d := range out["declarations"].([]any) {
		d := d.(map[string]any)
		switch d["kind"] {
		case "binding":
			got = append(got, fmt.Sprintf("binding %s %s %s", d["exchange"], d["queue"], d["routingKey"]))
		default:
			got = append(got, fmt.Sprintf("%s %s %s", d["kind"], d["name"], d["type"]))
		}
	}
	want := []string{
		"exchange orders topic",
		"exchange acemq.dlx direct",
		"exchange acemq.retry direct",
		"queue orders.new quorum",
		"queue orders.new.dlq classic",
		"queue orders.new.parked classic",
		"queue orders.new.retry.quorum.40s quorum",
		"queue orders.new.retry.quorum.80s quorum",
		"queue orders.new.retry.quorum.160s quorum",
		"binding orders orders.new order.*",
		"binding acemq.dlx orders.new.dlq orders.new.dlq",
		"binding acemq.dlx orders.new.parked orders.new.parked",
		"binding acemq.retry orders.new orders.new",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("declarations\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
	source := out["declarations"].([]any)[3].(map[string]any)
	wantArgs := map[string]any{"x-queue-type": "quorum", "x-dead-letter-exchange": "acemq.dlx", "x-dead-letter-routing-key": "orders.new.dlq"}
	if !reflect.DeepEqual(source["arguments"], wantArgs) {
		t.Errorf("orders.new arguments %v, want %v", source["arguments"], wantArgs)
	}
}

func TestPlanInvalidJSON(t *testing.T) {
	r := run(t, "", "topology", "plan", "-f", "testdata/invalid.yaml", "--json")
	if r.code != exitInvalid || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q; want exit 1 and nothing on stderr", r.code, r.stderr)
	}
	out := decodeJSON(t, r.stdout)
	problems, _ := out["problems"].([]any)
	if got := keys(out); !reflect.DeepEqual(got, []string{"problems"}) || len(problems) != 3 {
		t.Errorf("want {\"problems\": [3 problems]}, got %v", out)
	}
}

// docs/cli.md's ladder examples are the command's real output: each
// console block of `$ acemq ladder ...` not shortened with "...".
func TestDocsLadderExamples(t *testing.T) {
	doc, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```console\n\\$ acemq (ladder [^\n]*)\n(.*?)```\n").FindAllStringSubmatch(string(doc), -1)
	checked := 0
	for _, b := range blocks {
		if strings.Contains(b[2], "\n...\n") {
			continue
		}
		checked++
		r := run(t, "", shellSplit(b[1])...)
		if r.code != exitOK || r.stdout != b[2] {
			t.Errorf("docs/cli.md: $ acemq %s\n--- the command prints (exit %d)\n%s--- the doc shows\n%s", b[1], r.code, r.stdout, b[2])
		}
	}
	if checked < 2 {
		t.Errorf("found %d unshortened ladder examples in docs/cli.md, want the text and the --json one", checked)
	}
}

// shellSplit splits a command line of plain words and 'single-quoted' ones.
func shellSplit(line string) []string {
	var args []string
	for _, m := range regexp.MustCompile(`'([^']*)'|(\S+)`).FindAllStringSubmatch(line, -1) {
		args = append(args, m[1]+m[2])
	}
	return args
}

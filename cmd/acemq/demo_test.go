package main

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
)

// The demo on the test broker accounts for every order, with either kind of
// rungs: for 50 orders, 40 accepted (10 of them after retries), 5
// dead-lettered, 5 parked, none lost. (One after the other: they share the
// demo's queue.)
func TestDemo(t *testing.T) {
	for _, rungs := range []string{"at-least-once", "contract"} {
		r := run(t, "", "demo", "--url", brokertest.URL(t), "--messages", "50", "--rungs", rungs, "--json")
		if r.code != exitOK {
			t.Fatalf("--rungs %s: exit %d: %s", rungs, r.code, r.stderr)
		}
		var got demoSummary
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("--rungs %s: %v: %s", rungs, err, r.stdout)
		}
		want := demoSummary{Published: 50, Accepted: 40, RetriedInConsumer: 15, RetriedOnRung: 15, DeadLettered: 5, Parked: 5}
		if got != want {
			t.Errorf("--rungs %s: summary %+v, want %+v", rungs, got, want)
		}
	}
}

// Without --url the demo runs on memory:// and explains what happened, on
// at-least-once rungs unless told otherwise.
func TestDemoOnMemory(t *testing.T) {
	for _, tt := range []struct {
		args  []string
		rungs string
	}{
		{nil, "acemq.demo.orders.retry.quorum.1s and acemq.demo.orders.retry.quorum.2s"},
		{[]string{"--rungs", "contract"}, "acemq.demo.orders.retry.1s and acemq.demo.orders.retry.2s"},
	} {
		r := run(t, "", append([]string{"demo", "--messages", "20"}, tt.args...)...)
		if r.code != exitOK {
			t.Fatalf("%q: exit %d: %s", tt.args, r.code, r.stderr)
		}
		for _, want := range []string{
			"final: published 20, accepted 16, retried in consumer 6, retried on rungs 6, dead-lettered 2, parked 2, lost 0",
			tt.rungs,
			"Lost: 0.",
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%q: the demo's output lacks %q:\n%s", tt.args, want, r.stdout)
			}
		}
	}
}

func TestDemoRefusesAnUnknownKindOfRungs(t *testing.T) {
	r := run(t, "", "demo", "--rungs", "quorum")
	if r.code != exitFailure || !strings.Contains(r.stderr, `--rungs: unknown kind of rungs "quorum"`) {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// With --metrics-addr the demo prints its message counts as a scrape shows
// them, which agree with its own.
func TestDemoMetrics(t *testing.T) {
	r := run(t, "", "demo", "--messages", "20", "--metrics-addr", "127.0.0.1:0")
	for _, want := range []string{
		`acemq_consume_total{message_type="order.new",outcome="acked",queue="acemq.demo.orders",reason_class="none"} 16`,
		`acemq_consume_total{message_type="order.new",outcome="dead_lettered",queue="acemq.demo.orders",reason_class="exhausted"} 2`,
		`acemq_consume_total{message_type="order.new",outcome="parked",queue="acemq.demo.orders",reason_class="undecodable"} 2`,
		`acemq_consume_total{message_type="order.new",outcome="retried",queue="acemq.demo.orders",reason_class="retry"} 12`,
		`acemq_messages_retried_total{queue="acemq.demo.orders",rung="consumer"} 6`,
		`acemq_messages_retried_total{queue="acemq.demo.orders",rung="acemq.demo.orders.retry.quorum.1s"} 4`,
		`acemq_messages_retried_total{queue="acemq.demo.orders",rung="acemq.demo.orders.retry.quorum.2s"} 2`,
		`acemq_publish_total{exchange="acemq.demo",message_type="order.new",outcome="confirmed",reason_class="none",routing_key="order.new"} 20`,
		`acemq_republish_total{exchange="",kind="set_aside",message_type="order.new",outcome="confirmed",reason_class="none",routing_key="acemq.demo.orders.dlq"} 2`,
		"final: published 20, accepted 16, retried in consumer 6, retried on rungs 6, dead-lettered 2, parked 2, lost 0",
	} {
		if !strings.Contains(r.stdout, want+"\n") {
			t.Errorf("the demo's output lacks %q:\n%s", want, r.stdout)
		}
	}
	if r.code != 0 || !regexp.MustCompile(`(?m)^actuator: http://127\.0\.0\.1:\d+ \(/acemq-metrics, /acemq-health, /acemq-info, /livez, /readyz\) while the demo runs$`).MatchString(r.stdout) ||
		!regexp.MustCompile(`(?m)^as http://127\.0\.0\.1:\d+/acemq-metrics shows them at the end:$`).MatchString(r.stdout) {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// With --json the summary alone is on stdout, and where the actuator
// listens on stderr.
func TestDemoMetricsJSON(t *testing.T) {
	r := run(t, "", "demo", "--messages", "10", "--json", "--metrics-addr", "127.0.0.1:0")
	var summary demoSummary
	if err := json.Unmarshal([]byte(r.stdout), &summary); err != nil || summary.Published != 10 || summary.Lost != 0 {
		t.Errorf("stdout %q: %v, want the summary alone", r.stdout, err)
	}
	if r.code != 0 || !regexp.MustCompile(`(?m)^actuator: http://127\.0\.0\.1:\d+ \(`).MatchString(r.stderr) {
		t.Errorf("exit %d, stderr %q, want where the actuator listens", r.code, r.stderr)
	}
}

// What the demo serves: the actuator's paths.
func TestDemoServesMetricsAndHealth(t *testing.T) {
	m, err := newDemoMetrics("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer m.stop()
	conn, err := connect(t.Context(), "memory://demo-metrics-test", "", []acemq.ConnOption{acemq.WithObserver(m.observer)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := m.serve(conn); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"/acemq-metrics": `acemq_connection_state{state="connected"} 1`,
		"/acemq-health":  `{"status":"up",`,
		"/acemq-info":    `"transport":"memory"`,
		"/livez":         `"live":true`,
		"/readyz":        `"ready":true`,
	} {
		resp, err := http.Get(m.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %d\n%s\nwant 200 with %q", path, resp.StatusCode, body, want)
		}
	}
}

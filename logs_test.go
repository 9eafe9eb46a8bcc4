package acemq_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	neturl "net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/transport"
)

// logLines is a slog handler's output, one JSON object a line, safe to
// write from many goroutines.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// text is everything written so far.
func (l *logLines) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logLines) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(l, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

func (l *logLines) lines(t *testing.T) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.buf.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// At info level: one line per message set aside, saying which and where,
// and none for a message handled.
func TestLogsOneLinePerSetAside(t *testing.T) {
	b := acemqtest.NewBroker(t)
	var logs logLines
	conn := b.Connect(t, acemq.WithLogger(logs.logger()))
	ctx := context.Background()
	top := acemq.Topology{Queues: []acemq.QueueSpec{{Name: "orders", Type: transport.Classic}}}
	if err := top.Apply(ctx, conn); err != nil {
		t.Fatal(err)
	}
	c := consume(t, conn, "orders", func(_ context.Context, m acemq.Message[item]) acemq.Decision {
		if m.Body.N == 3 {
			return acemq.Reject(errors.New("order 3 is refused"))
		}
		return acemq.Accept()
	})
	pub := acemqtest.NewPublisher[item](t, conn, "")
	for n := range 5 {
		if err := pub.Publish(ctx, "orders", item{N: n}, acemq.WithMessageID("m-"+string(rune('0'+n)))); err != nil {
			t.Fatal(err)
		}
	}
	if err := acemqtest.NewPublisher[[]byte](t, conn, "", acemq.WithCodec(jsonBytes{})).Publish(ctx, "orders", []byte("not json"), acemq.WithMessageID("m-x")); err != nil {
		t.Fatal(err)
	}
	acemqtest.WaitFor(t, c, "every message settled", func(s acemq.Stats) bool { return s.Accepted == 4 && s.DeadLettered == 1 && s.Parked == 1 })

	lines := logs.lines(t)
	if len(lines) != 2 {
		t.Fatalf("%d log lines, want 2 (one per set-aside):\n%s", len(lines), logs.text())
	}
	want := map[string]map[string]any{
		"m-3": {"outcome": "dead_lettered", "target": "orders.dlq", "reason_class": "rejected", "reason": "order 3 is refused"},
		"m-x": {"outcome": "parked", "target": "orders.parked", "reason_class": "undecodable"},
	}
	for _, l := range lines {
		w, ok := want[l["message_id"].(string)]
		if !ok || l["msg"] != "acemq: message set aside" || l["queue"] != "orders" || l["level"] != "WARN" {
			t.Errorf("log line %v", l)
			continue
		}
		for k, v := range w {
			if l[k] != v {
				t.Errorf("log line for %s: %s = %v, want %v", l["message_id"], k, l[k], v)
			}
		}
	}
}

// jsonBytes publishes raw bytes labelled as JSON, so that a consumer of a
// struct cannot decode them.
type jsonBytes struct{}

func (jsonBytes) ContentType() string           { return "application/json" }
func (jsonBytes) Reads(string) bool             { return true }
func (jsonBytes) Marshal(v any) ([]byte, error) { return acemq.Bytes.Marshal(v) }
func (jsonBytes) Unmarshal(ct string, data []byte, v any) error {
	return acemq.Bytes.Unmarshal(ct, data, v)
}

// A lost connection and its recovery are a line each, with no password.
func TestLogsConnectionEvents(t *testing.T) {
	url := brokertest.URL(t)
	var logs logLines
	name := brokertest.UniqueName(t, "logs")
	conn, err := acemq.Connect(t.Context(), url, acemq.WithLogger(logs.logger()), acemq.WithConnectionName(name))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	brokertest.CloseConnections(t, name)
	// The transport logs the recovery just after it counts it (Health), so
	// wait for the line itself.
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(logs.text(), "connection recovered"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no recovery logged within 30s; logs:\n%s", logs.text())
		}
	}
	var msgs []string
	for _, l := range logs.lines(t) {
		msgs = append(msgs, l["msg"].(string))
	}
	if strings.Join(msgs, "|") != "rabbitmq: connection lost|rabbitmq: connection recovered" {
		t.Errorf("log lines %q, want connection lost, then recovered", msgs)
	}
	if conn.Health(t.Context()).Recoveries < 1 {
		t.Errorf("logged a recovery, but Health counts none")
	}
	if password := passwordOf(url); password != "" && strings.Contains(logs.text(), ":"+password+"@") {
		t.Errorf("the logs hold the password:\n%s", logs.text())
	}
}

func passwordOf(rawURL string) string {
	u, err := neturl.Parse(rawURL)
	if err != nil || u.User == nil {
		return ""
	}
	p, _ := u.User.Password()
	return p
}

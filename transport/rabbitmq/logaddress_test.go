package rabbitmq

import (
	"slices"
	"strings"
	"testing"

	"github.com/acemq-go/acemq/transport"
)

// After a failover from A to B, every log line names B, the address in
// use at the time of the line, as its broker: the lines of the publishing
// connection, opened after the failover with B, and the blocked and lost
// lines of the connections through B as much as the recovered one.
func TestLogLinesNameTheAddressInUse(t *testing.T) {
	t.Parallel()
	var logs logBuffer
	a, b := startProxy(t, nil), startProxy(t, nil)
	addrA, addrB := RedactURL(a.url(t, "amqp")), RedactURL(b.url(t, "amqp"))
	tr := dial(t, a.url(t, "amqp"), Options{Logger: logs.logger(), Addresses: []string{b.url(t, "amqp")}})
	ev := notified(tr)
	ctx := testCtx(t)
	if got := tr.State().Address; got != addrA {
		t.Errorf("State().Address = %q, want %q", got, addrA)
	}

	a.stop()
	ev.next(t, ctx, transport.EventLost)
	ev.next(t, ctx, transport.EventRecovered)
	if got := tr.State().Address; got != addrB {
		t.Errorf("State().Address after the failover = %q, want %q", got, addrB)
	}
	publish(t, tr, classicQueue(t, tr, nil), "opens the publishing connection")
	const reason = "low on disk (test)"
	b.inject(10, 60, append([]byte{byte(len(reason))}, reason...))
	ev.next(t, ctx, transport.EventBlocked)
	b.inject(10, 61, nil)
	ev.next(t, ctx, transport.EventUnblocked)
	b.closeConns()
	if kinds, count := ev.take(t, ctx, 4); count[transport.EventLost] != 2 || count[transport.EventRecovered] != 2 {
		t.Errorf("events of the two connections' loss: %v, want each lost and recovered", kinds)
	}

	out := logs.String()
	_, after, ok := strings.Cut(out, "connection recovered")
	if !ok {
		t.Fatalf("no recovered line in:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace("msg=\"rabbitmq: connection recovered"+after), "\n")
	for _, want := range []string{"publishing connection opened", "publishing connection blocked", "publishing connection unblocked",
		"rabbitmq: connection lost", "publishing connection lost", "rabbitmq: connection recovered", "publishing connection recovered"} {
		if !slices.ContainsFunc(lines[1:], func(l string) bool { return strings.Contains(l, want) }) {
			t.Errorf("no %q among the lines after the failover:\n%s", want, strings.Join(lines, "\n"))
		}
	}
	for _, line := range lines {
		if !strings.Contains(line, "broker="+addrB) || strings.Contains(line, addrA) {
			t.Errorf("line names another broker than %s, the address in use:\n%s", addrB, line)
		}
	}
}

package rabbitmq

import (
	"strings"
	"testing"

	"github.com/acemq-go/acemq/transport"
)

// After a failover from A to B, every log line names B, the address in
// use at the time of the line, as its broker: the blocked and lost lines of
// the connection through B as much as the recovered one.
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
	const reason = "low on disk (test)"
	b.inject(10, 60, append([]byte{byte(len(reason))}, reason...))
	ev.next(t, ctx, transport.EventBlocked)
	b.inject(10, 61, nil)
	ev.next(t, ctx, transport.EventUnblocked)
	b.closeConns()
	ev.next(t, ctx, transport.EventLost)
	ev.next(t, ctx, transport.EventRecovered)

	out := logs.String()
	_, after, ok := strings.Cut(out, "connection recovered")
	if !ok {
		t.Fatalf("no recovered line in:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace("msg=\"rabbitmq: connection recovered"+after), "\n")
	for _, want := range []string{"connection recovered", "connection blocked", "connection unblocked", "connection lost", "connection recovered"} {
		if len(lines) == 0 || !strings.Contains(lines[0], want) {
			t.Fatalf("lines after the failover:\n%s\nwant %q next", strings.Join(lines, "\n"), want)
		}
		if !strings.Contains(lines[0], "broker="+addrB) || strings.Contains(lines[0], addrA) {
			t.Errorf("line names another broker than %s, the address in use:\n%s", addrB, lines[0])
		}
		lines = lines[1:]
	}
}

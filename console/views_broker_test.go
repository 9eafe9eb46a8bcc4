package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/admin"
	"github.com/acemq-go/acemq/console"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/deadletter"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/internal/testing/conntest"
	"github.com/acemq-go/acemq/internal/testing/deliverytest"
	"github.com/acemq-go/acemq/transport"
)

// brokerConsole is a console on the test broker, on a vhost of the test's
// own, with its connection.
func brokerConsole(t *testing.T, name string) (*httptest.Server, *acemq.Conn) {
	t.Helper()
	u := brokertest.VhostURL(t)
	conn := conntest.Connect(t, u, name)
	endpoint, err := admin.EndpointFor(u, brokertest.ManagementURL())
	if err != nil {
		t.Fatal(err)
	}
	// A minute for a page's broker work, not the default 10 s: these
	// tests run beside others on a loaded machine, and a page that gives
	// up is not what they test (outage_test.go is).
	s, err := console.New(console.Config{Conn: conn, Endpoint: endpoint, PageTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv, conn
}

func fetch(t *testing.T, srv *httptest.Server, path string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return do(t, req)
}

// Looking never changes anything: a quorum queue with x-delivery-limit 2
// (a live source queue, and one a team named X.dlq) holding messages,
// viewed 10 times through the queue page and the overview, keeps every
// message: its depth does not change, nothing is dead-lettered, and
// consumed afterwards no message carries an x-delivery-count above 0. A
// quorum queue counts each message read and handed back as a delivery
// (the console read queues so before), so the console reads neither;
// their pages say why, with the depth. A third such queue read once the
// old way (deadletter.Browse) shows what the broker counts for that.
func TestAViewCountsNoDeliveryOnRabbitMQ(t *testing.T) {
	srv, conn := brokerConsole(t, "console view test")
	tr := conn.Transport()
	ctx := t.Context()
	caught := brokertest.UniqueName(t, "caught")
	live := brokertest.UniqueName(t, "live")
	namedDLQ := contract.DeadLetterQueue(brokertest.UniqueName(t, "team"))
	if err := tr.DeclareQueue(ctx, transport.Queue{Name: caught, Type: transport.Classic, Durable: true}); err != nil {
		t.Fatal(err)
	}
	const n = 5
	for _, q := range []string{live, namedDLQ} {
		// What goes past the limit is dead-lettered into caught.
		err := tr.DeclareQueue(ctx, transport.Queue{Name: q, Type: transport.Quorum, Durable: true, Arguments: transport.Table{
			contract.ArgDeliveryLimit: int64(2), contract.ArgDeadLetterExchange: "", contract.ArgDeadLetterRoutingKey: caught}})
		if err != nil {
			t.Fatal(err)
		}
		publish(t, conn, q, n)
	}
	for range 10 {
		for _, q := range []string{live, namedDLQ} {
			r := fetch(t, srv, "/queue?name="+url.QueryEscape(q))
			if r.status != http.StatusOK || !strings.Contains(r.body, `id="not-read"`) {
				t.Fatalf("the page of %s: HTTP %d, want 200 saying why its messages are not read:\n%s", q, r.status, r.body)
			}
			if strings.Contains(r.body, `<td class="id">`) {
				t.Errorf("the page of %s shows messages", q)
			}
		}
		if r := fetch(t, srv, "/"); r.status != http.StatusOK {
			t.Fatalf("the overview: HTTP %d\n%s", r.status, r.body)
		}
	}
	r := fetch(t, srv, "/queue?name="+url.QueryEscape(namedDLQ))
	if want := "is a quorum queue"; !strings.Contains(r.body, want) || !strings.Contains(r.body, fmt.Sprintf("%d ready", n)) {
		t.Errorf("the page of %s does not say %q and its depth %d:\n%s", namedDLQ, want, n, r.body)
	}
	for _, q := range []string{live, namedDLQ} {
		if st, err := tr.InspectQueue(ctx, q); err != nil || st.Messages != n {
			t.Errorf("%s holds %d messages (%v) after 10 views, want %d", q, st.Messages, err, n)
		}
		msgs := deliverytest.TakeAll(t, tr, q)
		if len(msgs) != n {
			t.Errorf("%s gave %d messages, want %d", q, len(msgs), n)
		}
		for _, m := range msgs {
			// Absent (4.x), or 0 on this first delivery (3.10 sets it).
			if c, ok := m.Headers[contract.HeaderDeliveryCount]; ok && fmt.Sprint(c) != "0" {
				t.Errorf("a message of %s carries %s %v: a view counted as a delivery", q, contract.HeaderDeliveryCount, c)
			}
		}
	}
	control := brokertest.UniqueName(t, "control")
	if err := tr.DeclareQueue(ctx, transport.Queue{Name: control, Type: transport.Quorum, Durable: true, Arguments: transport.Table{
		contract.ArgDeliveryLimit: int64(2)}}); err != nil {
		t.Fatal(err)
	}
	publish(t, conn, control, 1)
	if err := deadletter.Browse(ctx, conn, control, 0, func(transport.Message) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if msgs := deliverytest.TakeAll(t, tr, control); len(msgs) == 1 {
		t.Logf("RabbitMQ %s: a message of a quorum queue read once and handed back is then delivered with %s %v",
			tr.State().ServerVersion, contract.HeaderDeliveryCount, msgs[0].Headers[contract.HeaderDeliveryCount])
	}
	if st, err := tr.InspectQueue(ctx, caught); err != nil || st.Messages != 0 {
		t.Errorf("%d messages were dead-lettered (%v), want none", st.Messages, err)
	}
}

// A "Replay all 500" confirmed while the queue page is viewed again and
// again (another tab, refreshing) moves every message: the view and the
// job take turns at the queue, and the report says what the queue holds
// at the end.
func TestReplayAllWhileViewedOnRabbitMQ(t *testing.T) {
	srv, conn := brokerConsole(t, "console race test")
	tr := conn.Transport()
	ctx := t.Context()
	source := brokertest.UniqueName(t, "race")
	dlq := contract.DeadLetterQueue(source)
	for _, q := range []string{source, dlq} {
		if err := tr.DeclareQueue(ctx, transport.Queue{Name: q, Type: transport.Classic, Durable: true}); err != nil {
			t.Fatal(err)
		}
	}
	const n = 500
	publish(t, conn, dlq, n)
	page := "/queue?name=" + url.QueryEscape(dlq)
	first := fetch(t, srv, page)
	token := csrfField.FindStringSubmatch(first.body)
	if token == nil {
		t.Fatalf("no CSRF token on the queue page:\n%s", first.body)
	}

	viewing, stop := context.WithCancel(ctx)
	viewed := make(chan int)
	go func() { // the other tab: the page, refreshed, over and over
		views := 0
		for viewing.Err() == nil {
			req, _ := http.NewRequestWithContext(viewing, http.MethodGet, srv.URL+page+"&refresh=1", nil)
			if resp, err := client.Do(req); err == nil {
				resp.Body.Close()
				views++
			}
		}
		viewed <- views
	}()
	f := fixture{srv: srv, conn: conn, source: source, dlq: dlq}
	form := url.Values{"csrf": {token[1]}, "op": {"replay all"}, "queue": {dlq}}
	if r := post(t, f, "/confirm", form, nil); !strings.Contains(r.body, fmt.Sprintf("Replay %d messages", n)) {
		t.Fatalf("the confirmation (HTTP %d):\n%s", r.status, r.body)
	}
	state := awaitJob(t, f, runAction(t, f, form, n))
	stop()
	views := <-viewed
	t.Logf("the other tab viewed the page %d times meanwhile; the job: %s", views, state)
	want := fmt.Sprintf("replayed %d of the %d messages taken (the queue held %d); 0 left in place; %s holds 0 ready now", n, n, n, dlq)
	if !strings.Contains(state, want) || strings.Contains(state, `"error":`) {
		t.Errorf("the job's report: %s\nwant %q", state, want)
	}
	if got := len(deliverytest.TakeAll(t, tr, source)); got != n {
		t.Errorf("%s holds %d messages, want %d", source, got, n)
	}
	if st, err := tr.InspectQueue(ctx, dlq); err != nil || st.Messages != 0 {
		t.Errorf("%s holds %d (%v), want 0", dlq, st.Messages, err)
	}
}

package console_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/actuator"
	"github.com/acemq-go/acemq/console"
)

const serviceToken = "0123456789abcdef0123456789abcdef"

// service is a service running in the test: a consumer "orders" on
// memory:// and its actuator on httptest (127.0.0.1), with opts.
type service struct {
	consumer *acemq.Consumer
	url      string
}

func runService(t *testing.T, opts ...actuator.Option) service {
	t.Helper()
	conn := acemqtest.NewBroker(t).Connect(t)
	topology := acemq.Topology{Queues: []acemq.QueueSpec{{Name: "orders", DeadLetter: true}}}
	if err := topology.Apply(t.Context(), conn); err != nil {
		t.Fatal(err)
	}
	c, err := acemq.Consume(t.Context(), conn, "orders", func(context.Context, acemq.Message[string]) acemq.Decision { return acemq.Accept() })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Close(context.Background()) })
	h, err := actuator.New(conn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return service{consumer: c, url: srv.URL}
}

// unreachable is an actuator's URL where nothing listens.
func unreachable(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	return srv.URL
}

var consumerRow = regexp.MustCompile(`(?s)<tr data-consumer="orders" class="consumer-(\w+)">.*?</tr>`)

// consumerState is the state the consumers page shows of orders.
func consumerState(t *testing.T, f fixture) string {
	t.Helper()
	r := get(t, f, "/consumers")
	m := consumerRow.FindStringSubmatch(r.body)
	if r.status != http.StatusOK || m == nil {
		t.Fatalf("the consumers page (HTTP %d) has no row of orders:\n%s", r.status, r.body)
	}
	return m[1]
}

// The consumers page lists each service's consumers from its actuator, an
// unreachable one shown so beside them; its forms pause, resume and
// rescale a consumer, each written to the audit log.
func TestConsumersPagePausesAndResumes(t *testing.T) {
	svc := runService(t)
	var logs logBuffer
	f := newFixture(t, 0, func(c *console.Config) {
		c.Services = []console.Service{{Name: "shop", URL: svc.url}, {Name: "billing", URL: unreachable(t)}}
		logTo(&logs)(c)
	})
	r := get(t, f, "/consumers")
	if r.status != http.StatusOK {
		t.Fatalf("the consumers page: HTTP %d\n%s", r.status, r.body)
	}
	for _, want := range []string{`data-service="shop"`, `data-service="billing"`, `class="warn unreachable"`, `<td class="num scale">1 / 20</td>`, `value="pause"`, `href="/consumers"`} {
		if !strings.Contains(r.body, want) {
			t.Errorf("the consumers page lacks %s:\n%s", want, r.body)
		}
	}
	if got := consumerState(t, f); got != "running" {
		t.Fatalf("orders is %s on the page, want running", got)
	}

	token := csrf(t, f)
	control := func(op string, extra url.Values) {
		t.Helper()
		form := url.Values{"csrf": {token}, "service": {"shop"}, "consumer": {"orders"}, "queue": {"orders"}, "op": {op}}
		for k, v := range extra {
			form[k] = v
		}
		r := post(t, f, "/consumers", form, nil)
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/consumers" {
			t.Fatalf("%s: HTTP %d, Location %q\n%s", op, r.status, r.header.Get("Location"), r.body)
		}
	}
	control("pause", nil)
	if st := svc.consumer.Status(); st.State != acemq.ConsumerPaused {
		t.Errorf("after the console's pause the consumer is %s", st.State)
	}
	if got := consumerState(t, f); got != "paused" {
		t.Errorf("the page shows orders %s after the pause, want paused", got)
	}
	if r := get(t, f, "/consumers"); !strings.Contains(r.body, `<td class="paused-by">operator</td>`) || !strings.Contains(r.body, `value="resume"`) {
		t.Errorf("the paused consumer's row says neither who paused it nor offers to resume:\n%s", r.body)
	}
	control("scale", url.Values{"concurrency": {"4"}, "prefetch": {""}})
	if got := svc.consumer.Status().Scale; got != (acemq.Scale{Concurrency: 4, Prefetch: 20}) {
		t.Errorf("after the console's rescale the consumer runs at %+v, want 4 / 20", got)
	}
	control("resume", nil)
	if got := consumerState(t, f); got != "running" {
		t.Errorf("the page shows orders %s after the resume, want running", got)
	}
	var actions []string
	for _, rec := range logs.records(t, "console action") {
		if rec["service"] != "shop" || rec["consumer"] != "orders" || rec["queue"] != "orders" || rec["outcome"] != "ok" || rec["who"] != "local" {
			t.Errorf("an audit line without who, where, which service, consumer and queue, or not ok: %v", rec)
		}
		actions = append(actions, rec["action"].(string)+" "+rec["state"].(string))
	}
	if got, want := strings.Join(actions, ", "), "consumer pause paused, consumer scale paused, consumer resume running"; got != want {
		t.Errorf("the audit log has %q, want %q", got, want)
	}
}

// What the console cannot do is refused with a page that says why, and
// changes nothing.
func TestConsumersPageRefusals(t *testing.T) {
	svc := runService(t, actuator.WithControlToken(serviceToken))
	f := newFixture(t, 0, func(c *console.Config) {
		c.Services = []console.Service{{Name: "shop", URL: svc.url, Token: serviceToken},
			{Name: "wrong-token", URL: svc.url, Token: strings.Repeat("x", 32)}, {Name: "billing", URL: unreachable(t)}}
	})
	token := csrf(t, f)
	for _, c := range []struct {
		name   string
		form   url.Values
		status int
		says   string
	}{
		{"no CSRF token", url.Values{"service": {"shop"}, "consumer": {"orders"}, "op": {"pause"}}, http.StatusForbidden, "CSRF"},
		{"an unknown service", url.Values{"service": {"nobody"}, "consumer": {"orders"}, "op": {"pause"}}, http.StatusNotFound, "not told of a service"},
		{"an unknown action", url.Values{"service": {"shop"}, "consumer": {"orders"}, "op": {"delete"}}, http.StatusBadRequest, "no consumer action"},
		{"no consumer", url.Values{"service": {"shop"}, "op": {"pause"}}, http.StatusBadRequest, "No consumer named"},
		{"a scale of nothing", url.Values{"service": {"shop"}, "consumer": {"orders"}, "op": {"scale"}}, http.StatusBadRequest, "give a concurrency"},
		{"a scale of words", url.Values{"service": {"shop"}, "consumer": {"orders"}, "op": {"scale"}, "concurrency": {"many"}}, http.StatusBadRequest, "not a whole number"},
		{"an unknown consumer", url.Values{"service": {"shop"}, "consumer": {"nobody"}, "op": {"pause"}}, http.StatusBadGateway, "404"},
		{"a wrong token", url.Values{"service": {"wrong-token"}, "consumer": {"orders"}, "op": {"pause"}}, http.StatusBadGateway, "401"},
		{"an unreachable service", url.Values{"service": {"billing"}, "consumer": {"orders"}, "op": {"pause"}}, http.StatusBadGateway, "unreachable"},
	} {
		if c.name != "no CSRF token" {
			c.form.Set("csrf", token)
		}
		r := post(t, f, "/consumers", c.form, nil)
		if r.status != c.status || !strings.Contains(r.body, c.says) {
			t.Errorf("%s: HTTP %d, want %d saying %q:\n%s", c.name, r.status, c.status, c.says, r.body)
		}
	}
	if st := svc.consumer.Status().State; st != acemq.ConsumerRunning {
		t.Errorf("after the refusals the consumer is %s, want running", st)
	}
	// The token goes with each call: the page reads the consumers through
	// an actuator that wants it.
	if got := consumerState(t, f); got != "running" {
		t.Errorf("orders is %s on the page", got)
	}
}

// A read-only console shows the consumers and offers no control.
func TestConsumersPageReadOnly(t *testing.T) {
	svc := runService(t)
	f := newFixture(t, 0, func(c *console.Config) {
		c.ReadOnly = true
		c.Services = []console.Service{{Name: "shop", URL: svc.url}}
	})
	r := get(t, f, "/consumers")
	if r.status != http.StatusOK || !strings.Contains(r.body, `data-consumer="orders"`) || strings.Contains(r.body, `name="op"`) {
		t.Errorf("read-only: HTTP %d; want the consumer shown without controls:\n%s", r.status, r.body)
	}
	form := url.Values{"csrf": {csrf(t, f)}, "service": {"shop"}, "consumer": {"orders"}, "op": {"pause"}}
	if r := post(t, f, "/consumers", form, nil); r.status != http.StatusForbidden || !strings.Contains(r.body, "read-only") {
		t.Errorf("read-only pause: HTTP %d, want 403", r.status)
	}
	if st := svc.consumer.Status().State; st != acemq.ConsumerRunning {
		t.Errorf("a read-only console paused the consumer (%s)", st)
	}
}

// Services the console could not tell apart or reach are New's error.
func TestServicesAreChecked(t *testing.T) {
	conn := acemqtest.NewBroker(t).Connect(t)
	for _, c := range []struct {
		name     string
		services []console.Service
	}{
		{"no name", []console.Service{{URL: "http://127.0.0.1:9464"}}},
		{"two of a name", []console.Service{{Name: "a", URL: "http://127.0.0.1:9464"}, {Name: "a", URL: "http://127.0.0.1:9465"}}},
		{"not http", []console.Service{{Name: "a", URL: "ftp://127.0.0.1:9464"}}},
		{"no host", []console.Service{{Name: "a", URL: "http:///acemq"}}},
		{"a password in the URL", []console.Service{{Name: "a", URL: "http://u:p@127.0.0.1:9464"}}},
	} {
		if _, err := console.New(console.Config{Conn: conn, Services: c.services}); err == nil {
			t.Errorf("%s: New took %+v", c.name, c.services)
		}
	}
	if r := get(t, newFixture(t, 0, nil), "/consumers"); r.status != http.StatusOK || !strings.Contains(r.body, `id="no-services"`) {
		t.Errorf("a console told of no service: HTTP %d, want a page saying so", r.status)
	}
}

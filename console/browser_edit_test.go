package console_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/admin"
	"github.com/acemq-go/acemq/console"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/internal/testing/browsertest"
	"github.com/acemq-go/acemq/internal/testing/conntest"
	"github.com/acemq-go/acemq/internal/testing/deliverytest"
	"github.com/acemq-go/acemq/transport"
)

// onRabbitMQ is a console on a vhost of its own of the test broker, with a
// source queue and its dead-letter and parked queues, the dead-letter queue
// holding n dead letters.
type onRabbitMQ struct {
	url, source, dlq string
	conn             *acemq.Conn
	srv              *httptest.Server
}

func consoleOnRabbitMQ(t *testing.T, n int, edit func(*console.Config)) onRabbitMQ {
	t.Helper()
	amqpURL := brokertest.VhostURL(t)
	conn := conntest.Connect(t, amqpURL, "console "+t.Name())
	tr := conn.Transport()
	o := onRabbitMQ{conn: conn, source: brokertest.UniqueName(t, "console")}
	o.dlq = contract.DeadLetterQueue(o.source)
	for _, q := range []string{o.source, o.dlq, contract.ParkedQueue(o.source)} {
		if err := tr.DeclareQueue(t.Context(), transport.Queue{Name: q, Type: transport.Classic, Durable: true}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = tr.DeleteQueue(context.Background(), q) })
	}
	publish(t, conn, o.dlq, n)
	endpoint, err := admin.EndpointFor(amqpURL, brokertest.ManagementURL())
	if err != nil {
		t.Fatal(err)
	}
	o.srv = serve(t, console.Config{Conn: conn, Endpoint: endpoint}, edit)
	o.url = o.srv.URL
	return o
}

// browse drives ctx: step runs actions within a bound and says what the
// page says when they fail; text reads an element's text.
type browse struct {
	t   *testing.T
	ctx context.Context
}

func (b browse) step(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	sctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(sctx, steps...); err != nil {
		page, _ := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS("body")))
		b.t.Fatalf("%s: %v; the page says:\n%s", what, err, page)
	}
}

func (b browse) text(selector string) string {
	b.t.Helper()
	get := chromedp.Text[chromedp.CSS]
	if strings.HasPrefix(selector, "#reasons") {
		get = chromedp.TextContent[chromedp.CSS] // the reason chart is an SVG, which has no innerText
	}
	v, err := readText(b.ctx, get(chromedp.CSS(selector)))
	if err != nil {
		b.t.Fatalf("the text of %s: %v", selector, err)
	}
	return v
}

// The edit and retry of one message in a browser, against RabbitMQ: from
// the queue page's link, the body and a header edited, reviewed, confirmed;
// the edited copy is in the source queue, the original gone and the
// others in their places; opening it again says it is no longer there.
func TestBrowserEditAndRetryOnRabbitMQ(t *testing.T) {
	o := consoleOnRabbitMQ(t, 5, nil)
	b := browse{t, browsertest.Browser(t, 1024, 768)}
	tr := o.conn.Transport()

	b.step("the queue page", chromedp.Navigate(o.url+"/queue?name="+o.dlq), chromedp.WaitVisible(chromedp.CSS(`a.edit[href$="id=id-00003"]`)))
	b.step("open id-00003", chromedp.Click(chromedp.CSS(`a.edit[href$="id=id-00003"]`)), chromedp.WaitVisible(chromedp.CSS("#edit-body")))
	body, err := chromedp.Run(b.ctx, chromedp.Value(chromedp.CSS("#edit-body")))
	if err != nil || body != `{"n":3}` {
		t.Fatalf("the editor's body is %q (%v), want the message's", body, err)
	}
	headers, err := chromedp.Run(b.ctx, chromedp.Value(chromedp.CSS("#edit-headers")))
	if err != nil || !strings.Contains(headers, `"tenant": "acme"`) || strings.Contains(headers, contract.HeaderError) {
		t.Fatalf("the editor's headers are %q (%v)", headers, err)
	}
	headers = strings.Replace(headers, `"tenant": "acme"`, `"tenant": "acme-eu"`, 1)
	b.step("edit and review",
		chromedp.SetValue(chromedp.CSS("#edit-body"), "{\n  \"n\": 3,\n  \"sku\": \"W-1\"\n}"),
		chromedp.SetValue(chromedp.CSS("#edit-headers"), headers),
		chromedp.Click(chromedp.CSS("#review")), chromedp.WaitVisible(chromedp.CSS("#what")))
	if got := b.text("#what"); !strings.Contains(got, "(body and headers edited) to "+o.source) {
		t.Errorf("the review says %q", got)
	}
	if got := b.text("#copy-headers"); !strings.Contains(got, `"acemq-edit-count": 1`) || !strings.Contains(got, `"x-acemq-attempt": 1`) {
		t.Errorf("the review's headers lack the edit's provenance:\n%s", got)
	}
	b.step("confirm", chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS("#result")))
	if got := b.text("#result"); !strings.Contains(got, "is in "+o.source+", confirmed by the broker") || !strings.Contains(got, "the 4 other messages taken on the way were put back") {
		t.Errorf("the result says %q", got)
	}

	if n := depthOn(t, tr, o.dlq); n != 4 {
		t.Errorf("%d messages left in %s, want 4", n, o.dlq)
	}
	got := deliverytest.TakeAll(t, tr, o.source)
	if len(got) != 1 {
		t.Fatalf("%d messages in %s, want the edited copy", len(got), o.source)
	}
	m := got[0]
	if e := acemq.ReadEnvelope(m); e.ID != "id-00003" || e.Attempt != 1 || string(m.Body) != "{\n  \"n\": 3,\n  \"sku\": \"W-1\"\n}" ||
		m.Headers["tenant"] != "acme-eu" || m.Headers[contract.HeaderEditedParts] != "body,headers" {
		t.Errorf("the edited copy: %+v", m)
	}

	b.step("open it again", chromedp.Navigate(o.url+"/edit?queue="+o.dlq+"&id=id-00003"), chromedp.WaitVisible(chromedp.CSS("#error")))
	if got := b.text("h1"); got != "The message is no longer there" {
		t.Errorf("opening a message retried already: %q", got)
	}
}

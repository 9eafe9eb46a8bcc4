package console_test

import (
	"bytes"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/testing/deliverytest"
	"github.com/acemq-go/acemq/transport"
)

var (
	textareaField = regexp.MustCompile(`(?s)<textarea id="edit-(body|headers)" name="[a-z]+" rows="12" spellcheck="false">\n(.*?)</textarea>`)
	hiddenField   = regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`)
)

// editForm is the editor's form of the page body, as a browser would send
// it unchanged.
func editForm(t *testing.T, body string) url.Values {
	t.Helper()
	form := url.Values{}
	for _, m := range hiddenField.FindAllStringSubmatch(body, -1) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	for _, m := range textareaField.FindAllStringSubmatch(body, -1) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	if form.Get("body") == "" || form.Get("headers") == "" || form.Get("fingerprint") == "" {
		t.Fatalf("no editor form in the page:\n%s", body)
	}
	return form
}

// The edit and retry over HTTP on memory://: open, review, retry; the
// edited copy is in the source queue with its provenance, the original
// gone, the others in place.
func TestEditAndRetry(t *testing.T) {
	f := newFixture(t, 4, nil)
	r := get(t, f, "/queue?name="+f.dlq)
	if !strings.Contains(r.body, `href="/edit?queue=`+f.dlq+`&amp;id=id-00002"`) {
		t.Fatalf("the queue page has no edit link for id-00002:\n%s", r.body)
	}
	r = get(t, f, "/edit?queue="+f.dlq+"&id=id-00002")
	if r.status != http.StatusOK {
		t.Fatalf("opening id-00002: HTTP %d:\n%s", r.status, r.body)
	}
	form := editForm(t, r.body)
	if got := form.Get("body"); got != `{"n":2}` {
		t.Errorf("the editor's body is %q, want the message's", got)
	}
	form.Set("body", `{"n":2,"fixed":true}`)
	form.Set("headers", strings.Replace(form.Get("headers"), `"tenant": "acme"`, `"tenant": "acme-eu"`, 1))
	form.Set("step", "review")
	r = post(t, f, "/edit", form, nil)
	if r.status != http.StatusOK || !strings.Contains(r.body, "(body and headers edited)") || !strings.Contains(r.body, contract.HeaderEditedParts) {
		t.Fatalf("the review: HTTP %d:\n%s", r.status, r.body)
	}
	form.Set("step", "retry")
	r = post(t, f, "/edit", form, nil)
	if r.status != http.StatusOK || !strings.Contains(r.body, `id="result"`) {
		t.Fatalf("the retry: HTTP %d:\n%s", r.status, r.body)
	}
	if n := depth(t, f, f.dlq); n != 3 {
		t.Errorf("%d messages left in %s, want 3", n, f.dlq)
	}
	got := deliverytest.TakeAll(t, f.conn.Transport(), f.source)
	if len(got) != 1 {
		t.Fatalf("%d messages in %s, want the edited copy", len(got), f.source)
	}
	m := got[0]
	if e := acemq.ReadEnvelope(m); e.ID != "id-00002" || e.Attempt != 1 || string(m.Body) != `{"n":2,"fixed":true}` ||
		m.Headers["tenant"] != "acme-eu" || m.Headers[contract.HeaderEditedParts] != "body,headers" || m.Headers[contract.HeaderReplayedFrom] != f.dlq {
		t.Errorf("the edited copy: %+v", m)
	}
	if _, ok := m.Headers[contract.HeaderError]; ok {
		t.Errorf("the edited copy kept %s", contract.HeaderError)
	}

	// The same form again: the message is no longer there.
	r = post(t, f, "/edit", form, nil)
	if r.status != http.StatusNotFound || !strings.Contains(r.body, "The message is no longer there") {
		t.Errorf("retrying it twice: HTTP %d:\n%s", r.status, r.body)
	}
	if n := depth(t, f, f.dlq); n != 3 {
		t.Errorf("a refused retry left %d messages in %s, want 3", n, f.dlq)
	}
}

// Two messages with one id: which is meant is not known, so neither is
// opened.
func TestEditRefusesAnAmbiguousID(t *testing.T) {
	f := newFixture(t, 2, nil)
	publish(t, f.conn, f.dlq, 1) // a second id-00000
	r := get(t, f, "/edit?queue="+f.dlq+"&id=id-00000")
	if r.status != http.StatusConflict || !strings.Contains(r.body, "More than one message has that id") {
		t.Errorf("opening an id two messages have: HTTP %d:\n%s", r.status, r.body)
	}
	if n := depth(t, f, f.dlq); n != 3 {
		t.Errorf("%d messages in %s, want 3", n, f.dlq)
	}
}

// A body that is not UTF-8 is edited as base64, and travels byte for byte
// when only a header is edited.
func TestEditABinaryBody(t *testing.T) {
	f := newFixture(t, 0, nil)
	body := []byte{0x0a, 0x03, 'A', '-', '1', 0x11, 0, 0, 0, 0, 0, 0x9a, 0xb0, 0x40, 0xff}
	c, err := f.conn.Transport().Publish(t.Context(), transport.Publishing{RoutingKey: f.dlq, Mandatory: true, Message: transport.Message{
		Headers: transport.Table{contract.HeaderID: "bin-1", contract.HeaderError: "fatal error", "tenant": "acme"}, ContentType: contract.ContentTypeProtobuf, Body: body}})
	if err == nil {
		err = c.Wait(t.Context())
	}
	if err != nil {
		t.Fatal(err)
	}
	r := get(t, f, "/edit?queue="+f.dlq+"&id=bin-1")
	form := editForm(t, r.body)
	if form.Get("encoding") != "b64" || !strings.Contains(r.body, "not UTF-8, so as base64") {
		t.Fatalf("a binary body is not offered as base64:\n%s", r.body)
	}
	form.Set("headers", strings.Replace(form.Get("headers"), `"tenant": "acme"`, `"tenant": "acme-eu"`, 1))
	form.Set("step", "retry")
	if r = post(t, f, "/edit", form, nil); r.status != http.StatusOK {
		t.Fatalf("the retry: HTTP %d:\n%s", r.status, r.body)
	}
	got := deliverytest.TakeAll(t, f.conn.Transport(), f.source)
	if len(got) != 1 || !bytes.Equal(got[0].Body, body) || got[0].Headers[contract.HeaderEditedParts] != contract.EditedHeaders {
		t.Errorf("the edited copy: %+v", got)
	}
}

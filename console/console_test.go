package console_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/admin"
	"github.com/acemq-go/acemq/console"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
)

// fixture is a console on memory:// with a source queue whose dead-letter
// queue holds n messages.
type fixture struct {
	srv    *httptest.Server
	conn   *acemq.Conn
	source string
	dlq    string
	mgmt   string // the management API's host:port, which the pages name
}

const secretPassword = "s3cret-Pa55word"

func newFixture(t *testing.T, n int, edit func(*console.Config)) fixture {
	t.Helper()
	mb := memory.NewBroker()
	t.Cleanup(mb.Close)
	conn, err := acemq.New(mb.Connect())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	f := fixture{conn: conn, source: "orders.new"}
	f.dlq = contract.DeadLetterQueue(f.source)
	tr := conn.Transport()
	for _, q := range []string{f.source, f.dlq, contract.ParkedQueue(f.source)} {
		if err := tr.DeclareQueue(t.Context(), transport.Queue{Name: q, Type: transport.Classic, Durable: true}); err != nil {
			t.Fatal(err)
		}
	}
	publish(t, conn, f.dlq, n)
	// The management API answers for single queues only (memory:// holds
	// classic queues): the overview then says it did not answer.
	mgmt := httptest.NewServer(queueAPI(conn.Transport()))
	t.Cleanup(mgmt.Close)
	f.mgmt = strings.TrimPrefix(mgmt.URL, "http://")
	endpoint, err := admin.EndpointFor("amqp://operator:"+secretPassword+"@127.0.0.1:1/", "http://operator:"+secretPassword+"@"+f.mgmt)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = serve(t, console.Config{Conn: conn, Endpoint: endpoint}, edit)
	return f
}

// serve starts the console of c, as edit changes it, for the test.
func serve(t *testing.T, c console.Config, edit func(*console.Config)) *httptest.Server {
	t.Helper()
	if edit != nil {
		edit(&c)
	}
	s, err := console.New(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv
}

// queueAPI answers the management API's GET /api/queues/VHOST/NAME for
// the queues of tr, as classic queues, and nothing else (503).
func queueAPI(tr transport.Transport) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/api/queues/")
		vhost, name, two := strings.Cut(rest, "/")
		if !ok || !two || r.Method != http.MethodGet {
			http.Error(w, `{"error":"unavailable","reason":"not in this test"}`, http.StatusServiceUnavailable)
			return
		}
		vhost, _ = url.PathUnescape(vhost)
		name, _ = url.PathUnescape(name)
		st, err := tr.InspectQueue(r.Context(), name)
		if err != nil || vhost != "/" {
			http.Error(w, `{"error":"Object Not Found","reason":"Not Found"}`, http.StatusNotFound)
			return
		}
		fmt.Fprintf(w, `{"name":%q,"vhost":"/","type":"classic","durable":true,"arguments":{},"messages_ready":%d,"consumers":%d}`, name, st.Messages, st.Consumers)
	})
}

var purgeTokenField = regexp.MustCompile(`name="token" value="([0-9a-f]+)"`)

// purgeToken is the count a purge's confirmation carries.
func purgeToken(t *testing.T, confirmation string) string {
	t.Helper()
	m := purgeTokenField.FindStringSubmatch(confirmation)
	if m == nil {
		t.Fatalf("no token on the purge's confirmation:\n%s", confirmation)
	}
	return m[1]
}

// publish puts n dead letters in queue, every other one for a timeout.
func publish(t *testing.T, conn *acemq.Conn, queue string, n int) {
	t.Helper()
	for i := range n {
		reason := "exhausted 5 attempts: payment declined"
		if i%2 == 1 {
			reason = "exhausted 5 attempts: timeout calling stock"
		}
		id := fmt.Sprintf("id-%05d", i)
		c, err := conn.Transport().Publish(t.Context(), transport.Publishing{RoutingKey: queue, Mandatory: true, Message: transport.Message{
			Headers: transport.Table{contract.HeaderID: id, contract.HeaderType: "order.created", contract.HeaderAttempt: int64(5),
				contract.HeaderFirstSeen: time.Now().Add(-time.Hour).UnixMilli(), contract.HeaderError: reason, "tenant": "acme"},
			ContentType: "application/json", MessageID: id, Persistent: true, Body: fmt.Appendf(nil, `{"n":%d}`, i)}})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
}

// client follows no redirects: the tests look at them.
var client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

type response struct {
	status int
	header http.Header
	body   string
}

func do(t *testing.T, req *http.Request) response {
	t.Helper()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, string(b)}
}

func get(t *testing.T, f fixture, path string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return do(t, req)
}

func post(t *testing.T, f fixture, path string, form url.Values, edit func(*http.Request)) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if edit != nil {
		edit(req)
	}
	return do(t, req)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// csrf is the token of the queue page's forms.
func csrf(t *testing.T, f fixture) string {
	t.Helper()
	r := get(t, f, "/queue?name="+f.dlq)
	m := csrfField.FindStringSubmatch(r.body)
	if m == nil {
		t.Fatalf("no CSRF token on the queue page (HTTP %d):\n%s", r.status, r.body)
	}
	return m[1]
}

func depth(t *testing.T, f fixture, queue string) int {
	t.Helper()
	s, err := f.conn.Transport().InspectQueue(t.Context(), queue)
	if err != nil {
		t.Fatal(err)
	}
	return s.Messages
}

func TestQueuePageShowsReasonsAndMessages(t *testing.T) {
	f := newFixture(t, 4, nil)
	r := get(t, f, "/queue?name="+f.dlq)
	if r.status != http.StatusOK {
		t.Fatalf("HTTP %d:\n%s", r.status, r.body)
	}
	for _, want := range []string{`id="reasons"`, ">exhausted<", ">4<", "timeout calling stock", "id-00003", "order.created", `{&#34;n&#34;:3}`, "decoded: json", "tenant"} {
		if !strings.Contains(r.body, want) {
			t.Errorf("the queue page lacks %q", want)
		}
	}
	if n := depth(t, f, f.dlq); n != 4 {
		t.Errorf("showing the queue left %d messages, want 4", n)
	}
}

func TestEveryResponseHasTheSecurityHeaders(t *testing.T) {
	f := newFixture(t, 1, func(c *console.Config) { c.Token = "tok" })
	for _, path := range []string{"/", "/queue?name=x", "/login", "/static/console.css", "/nowhere", "/job?id=nope"} {
		r := get(t, f, path)
		if got := r.header.Get("Content-Security-Policy"); !strings.Contains(got, "default-src 'none'") || !strings.Contains(got, "script-src 'self'") || strings.Contains(got, "unsafe") {
			t.Errorf("GET %s: Content-Security-Policy %q", path, got)
		}
		if got := r.header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("GET %s: X-Content-Type-Options %q", path, got)
		}
		if got := r.header.Get("Referrer-Policy"); got != "same-origin" {
			t.Errorf("GET %s: Referrer-Policy %q", path, got)
		}
		if !strings.HasPrefix(path, "/static/") && r.header.Get("Cache-Control") != "no-store" {
			t.Errorf("GET %s: Cache-Control %q, want no-store", path, r.header.Get("Cache-Control"))
		}
	}
}

func TestNoInlineScriptOrStyle(t *testing.T) {
	f := newFixture(t, 2, nil)
	r := get(t, f, "/queue?name="+f.dlq)
	for _, bad := range []string{"<script>", "style=", "<style", "onclick", "javascript:"} {
		if strings.Contains(r.body, bad) {
			t.Errorf("the queue page has %q, which the Content-Security-Policy refuses", bad)
		}
	}
}

func TestCredentialsAreRequiredWhenConfigured(t *testing.T) {
	f := newFixture(t, 1, func(c *console.Config) { c.Token, c.User, c.Password = "the-token", "op", "pw" })
	path := "/queue?name=" + f.dlq
	if r := get(t, f, path); r.status != http.StatusSeeOther || r.header.Get("Location") != "/login" {
		t.Errorf("without credentials: HTTP %d to %q, want 303 to /login", r.status, r.header.Get("Location"))
	}
	try := func(name string, edit func(*http.Request), want int) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, f.srv.URL+path, nil)
		edit(req)
		if r := do(t, req); r.status != want {
			t.Errorf("%s: HTTP %d, want %d", name, r.status, want)
		}
	}
	try("a wrong bearer token", func(r *http.Request) { r.Header.Set("Authorization", "Bearer nope") }, http.StatusSeeOther)
	try("the bearer token", func(r *http.Request) { r.Header.Set("Authorization", "Bearer the-token") }, http.StatusOK)
	try("wrong basic auth", func(r *http.Request) { r.SetBasicAuth("op", "nope") }, http.StatusSeeOther)
	try("basic auth", func(r *http.Request) { r.SetBasicAuth("op", "pw") }, http.StatusOK)

	// A POST without credentials is refused before anything else.
	r := post(t, f, "/confirm", url.Values{"op": {"purge all"}, "queue": {f.dlq}}, nil)
	if r.status != http.StatusUnauthorized || r.header.Get("WWW-Authenticate") == "" {
		t.Errorf("a POST without credentials: HTTP %d (WWW-Authenticate %q), want 401 with a challenge", r.status, r.header.Get("WWW-Authenticate"))
	}

	// The login page hands out no CSRF token, takes the token and sets an
	// HttpOnly, SameSite=Strict cookie that lets the browser in.
	if login := get(t, f, "/login"); login.status != http.StatusOK || strings.Contains(login.body, `name="csrf"`) {
		t.Fatalf("the login page (HTTP %d) hands out a CSRF token:\n%s", login.status, login.body)
	}
	if r := post(t, f, "/login", url.Values{"token": {"nope"}}, nil); r.status != http.StatusUnauthorized {
		t.Errorf("login with a wrong token: HTTP %d, want 401", r.status)
	}
	r = post(t, f, "/login", url.Values{"token": {"the-token"}}, nil)
	cookie := r.header.Get("Set-Cookie")
	if r.status != http.StatusSeeOther || !strings.Contains(cookie, "HttpOnly") || !strings.Contains(cookie, "SameSite=Strict") {
		t.Fatalf("login: HTTP %d, Set-Cookie %q", r.status, cookie)
	}
	try("the login cookie", func(r *http.Request) { r.Header.Set("Cookie", strings.Split(cookie, ";")[0]) }, http.StatusOK)
}

func TestCheckListen(t *testing.T) {
	for _, c := range []struct {
		addr string
		cfg  console.Config
		ok   bool
	}{
		{"127.0.0.1:8080", console.Config{}, true},
		{"[::1]:8080", console.Config{}, true},
		{"localhost:8080", console.Config{}, true},
		{":8080", console.Config{}, false},
		{"0.0.0.0:8080", console.Config{}, false},
		{"192.0.2.1:8080", console.Config{}, false},
		// Credentials beyond loopback: over TLS, or plain HTTP when asked for.
		{"0.0.0.0:8080", console.Config{Token: "t"}, false},
		{"0.0.0.0:8080", console.Config{User: "u", Password: "p"}, false},
		{"0.0.0.0:8080", console.Config{Token: "t", TLSCert: "c.pem", TLSKey: "k.pem"}, true},
		{"0.0.0.0:8080", console.Config{User: "u", Password: "p", TLSCert: "c.pem", TLSKey: "k.pem"}, true},
		{"0.0.0.0:8080", console.Config{Token: "t", InsecureHTTP: true}, true},
		{"127.0.0.1:8080", console.Config{Token: "t"}, true}, // behind a TLS-terminating proxy
		{"0.0.0.0:8080", console.Config{Token: "t", TLSCert: "c.pem"}, false},
		{"0.0.0.0:8080", console.Config{User: "u"}, false},
		{"127.0.0.1:8080", console.Config{Password: "p"}, false},
		{"8080", console.Config{}, false},
	} {
		err := console.CheckListen(c.addr, c.cfg)
		if (err == nil) != c.ok {
			t.Errorf("CheckListen(%q, %+v) = %v, want ok %v", c.addr, c.cfg, err, c.ok)
		}
		if !c.ok && c.addr == ":8080" && !errors.Is(err, console.ErrNoCredentials) {
			t.Errorf("CheckListen(%q): %v, want ErrNoCredentials", c.addr, err)
		}
	}
}

func TestActionWithoutTheCSRFTokenIsRefused(t *testing.T) {
	f := newFixture(t, 3, nil)
	token := csrf(t, f)
	form := func(csrf string) url.Values {
		return url.Values{"csrf": {csrf}, "op": {"purge all"}, "queue": {f.dlq}, "count": {"3"}}
	}
	for name, c := range map[string]struct {
		form url.Values
		edit func(*http.Request)
	}{
		"no token":          {form(""), nil},
		"a wrong token":     {form(strings.Repeat("0", len(token))), nil},
		"another site":      {form(token), func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") }},
		"another origin":    {form(token), func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") }},
		"a truncated token": {form(token[:10]), nil},
	} {
		paths := []string{"/confirm", "/run", "/import", "/drift"}
		if c.edit != nil { // the login form has no token, but is refused from another site
			paths = append(paths, "/login")
		}
		for _, path := range paths {
			if r := post(t, f, path, c.form, c.edit); r.status != http.StatusForbidden {
				t.Errorf("%s to %s: HTTP %d, want 403", name, path, r.status)
			}
		}
	}
	if n := depth(t, f, f.dlq); n != 3 {
		t.Errorf("%d messages left in %s, want 3: a refused action changed it", n, f.dlq)
	}
	// The same form with the token is taken.
	if r := post(t, f, "/confirm", form(token), nil); r.status != http.StatusOK || !strings.Contains(r.body, "Purge "+f.dlq+": delete the 3 messages") {
		t.Errorf("with the token: HTTP %d\n%s", r.status, r.body)
	}
}

// Without credentials the console answers only to a loopback name: a page
// of another site whose name resolves to 127.0.0.1 (DNS rebinding) can
// read nothing, so never the CSRF token; with credentials any name does.
func TestWithoutCredentialsOnlyLoopbackNames(t *testing.T) {
	f := newFixture(t, 3, nil)
	for host, want := range map[string]int{
		"evil.example:8080": http.StatusMisdirectedRequest, "evil.example": http.StatusMisdirectedRequest,
		"10.0.0.5:8080":  http.StatusMisdirectedRequest,
		"localhost:8080": http.StatusOK, "127.0.0.1:8080": http.StatusOK, "[::1]:8080": http.StatusOK,
	} {
		req, err := http.NewRequest(http.MethodGet, f.srv.URL+"/queue?name="+f.dlq, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		if r := do(t, req); r.status != want || strings.Contains(r.body, csrf(t, f)) != (want == http.StatusOK) {
			t.Errorf("Host %s: HTTP %d, want %d (the CSRF token shown: %v)", host, r.status, want, strings.Contains(r.body, csrf(t, f)))
		}
	}
	withToken := newFixture(t, 1, func(c *console.Config) { c.Token = "t0ken" })
	req, err := http.NewRequest(http.MethodGet, withToken.srv.URL+"/queue?name="+withToken.dlq, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "console.example:8080"
	req.Header.Set("Authorization", "Bearer t0ken")
	if r := do(t, req); r.status != http.StatusOK {
		t.Errorf("with credentials, Host console.example: HTTP %d, want 200", r.status)
	}
}

func TestReadOnlyRefusesEveryAction(t *testing.T) {
	f := newFixture(t, 2, func(c *console.Config) { c.ReadOnly = true })
	token := csrf(t, f)
	for _, op := range []string{"replay all", "park all", "purge all", "export all", "replay selected", "import all"} {
		for _, path := range []string{"/confirm", "/run", "/import"} {
			r := post(t, f, path, url.Values{"csrf": {token}, "op": {op}, "queue": {f.dlq}, "id": {"id-00000"}, "count": {"2"}}, nil)
			if r.status != http.StatusForbidden || !strings.Contains(r.body, "read-only") {
				t.Errorf("read-only, %s to %s: HTTP %d, want 403 saying read-only", op, path, r.status)
			}
		}
	}
	if n := depth(t, f, f.dlq); n != 2 {
		t.Errorf("%d messages left, want 2", n)
	}
	if r := get(t, f, "/queue?name="+f.dlq); strings.Contains(r.body, "Replay selected") || strings.Contains(r.body, `type="checkbox"`) {
		t.Error("a read-only queue page offers actions")
	}
}

func TestSecretsAreNotRendered(t *testing.T) {
	f := newFixture(t, 1, nil)
	for _, path := range []string{"/", "/queue?name=" + f.dlq, "/drift", "/queue?name=nope"} {
		r := get(t, f, path)
		if strings.Contains(r.body, secretPassword) {
			t.Errorf("GET %s renders the broker's password", path)
		}
		if !strings.Contains(r.body, f.mgmt) {
			t.Errorf("GET %s does not name the broker", path)
		}
	}
}

func TestBadInputGivesAClearErrorPage(t *testing.T) {
	f := newFixture(t, 1, nil)
	token := csrf(t, f)
	for _, c := range []struct {
		name   string
		r      response
		status int
		says   string
	}{
		{"an unknown queue", get(t, f, "/queue?name=no.such.dlq"), http.StatusNotFound, "no.such.dlq"},
		{"no queue", get(t, f, "/queue"), http.StatusBadRequest, "Give the queue"},
		{"a bad match expression", get(t, f, "/queue?name="+f.dlq+"&match="+url.QueryEscape("attempt >=")), http.StatusBadRequest, "does not compile"},
		{"a match that is not true or false", get(t, f, "/queue?name="+f.dlq+"&match=attempt"), http.StatusBadRequest, "does not compile"},
		{"a bad limit", get(t, f, "/queue?name="+f.dlq+"&limit=-3"), http.StatusBadRequest, "limit must be"},
		{"an unknown page", get(t, f, "/nowhere"), http.StatusNotFound, "There is no page"},
		{"an unknown job", get(t, f, "/job?id=nope"), http.StatusNotFound, "There is no job"},
		{"a bad match in an action", post(t, f, "/confirm", url.Values{"csrf": {token}, "op": {"replay all"}, "queue": {f.dlq}, "match": {"reason ==="}}, nil), http.StatusBadRequest, "does not compile"},
		{"nothing selected", post(t, f, "/confirm", url.Values{"csrf": {token}, "op": {"replay selected"}, "queue": {f.dlq}}, nil), http.StatusBadRequest, "no message is selected"},
		{"an unknown action", post(t, f, "/confirm", url.Values{"csrf": {token}, "op": {"burn all"}, "queue": {f.dlq}}, nil), http.StatusBadRequest, "no action"},
		{"park of a parked queue", post(t, f, "/confirm", url.Values{"csrf": {token}, "op": {"park all"}, "queue": {contract.ParkedQueue(f.source)}}, nil), http.StatusBadRequest, "is not one"},
		{"replay of a queue without a source", post(t, f, "/confirm", url.Values{"csrf": {token}, "op": {"replay all"}, "queue": {f.source}}, nil), http.StatusBadRequest, "source queue is not known"},
		{"an action on an unknown queue", post(t, f, "/confirm", url.Values{"csrf": {token}, "op": {"export all"}, "queue": {"no.such.dlq"}}, nil), http.StatusNotFound, "no.such.dlq"},
		{"a run not confirmed", post(t, f, "/run", url.Values{"csrf": {token}, "op": {"purge all"}, "queue": {f.dlq}}, nil), http.StatusBadRequest, "not confirmed"},
		{"a drift without a file", post(t, f, "/drift", url.Values{"csrf": {token}}, nil), http.StatusBadRequest, "Choose a topology file"},
	} {
		if c.r.status != c.status || !strings.Contains(c.r.body, c.says) || !strings.Contains(c.r.body, `id="error"`) {
			t.Errorf("%s: HTTP %d, want %d and an error page saying %q:\n%s", c.name, c.r.status, c.status, c.says, c.r.body)
		}
	}
	if n := depth(t, f, f.dlq); n != 1 {
		t.Errorf("%d messages left, want 1", n)
	}
}

// A replay of the selected messages moves those and leaves the others,
// through the confirmation and the job, as the browser does it.
func TestReplaySelected(t *testing.T) {
	f := newFixture(t, 5, nil)
	token := csrf(t, f)
	form := url.Values{"csrf": {token}, "op": {"replay selected"}, "queue": {f.dlq}, "id": {"id-00001", "id-00003"}}
	r := post(t, f, "/confirm", form, nil)
	if !strings.Contains(r.body, "Replay 2 messages (of the 2 selected) from "+f.dlq+" back to "+f.source) {
		t.Fatalf("the confirmation does not say what will happen (HTTP %d):\n%s", r.status, r.body)
	}
	form.Set("count", "2")
	r = post(t, f, "/run", form, nil)
	if r.status != http.StatusSeeOther {
		t.Fatalf("run: HTTP %d\n%s", r.status, r.body)
	}
	job := r.header.Get("Location")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for {
		r = get(t, f, strings.Replace(job, "/job?", "/job.json?", 1))
		if strings.Contains(r.body, `"done":true`) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the job never ended: %s", r.body)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if !strings.Contains(r.body, `"what":"Replay 2 messages (of the 2 selected)`) || !strings.Contains(r.body, `"moved":2`) || !strings.Contains(r.body, "replayed 2 of the 4 messages taken (the queue held 5)") {
		t.Errorf("job: %s", r.body)
	}
	if got, left := depth(t, f, f.source), depth(t, f, f.dlq); got != 2 || left != 3 {
		t.Errorf("%d in %s and %d left in %s, want 2 and 3", got, f.source, left, f.dlq)
	}
}

// awaitJob follows the job at location (the run's redirect) to its end and
// returns its JSON.
func awaitJob(t *testing.T, f fixture, location string) string {
	t.Helper()
	// Minutes: 500 messages moved at 10 a second on a machine testing
	// two checkouts at once.
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	for {
		r := get(t, f, strings.Replace(location, "/job?", "/job.json?", 1))
		if strings.Contains(r.body, `"done":true`) {
			return r.body
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the job never ended: %s", r.body)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// runAction confirms and runs op on the fixture's dead-letter queue and
// returns the job's location.
func runAction(t *testing.T, f fixture, form url.Values, count int) string {
	t.Helper()
	form.Set("count", strconv.Itoa(count))
	r := post(t, f, "/run", form, nil)
	if r.status != http.StatusSeeOther {
		t.Fatalf("run %v: HTTP %d\n%s", form, r.status, r.body)
	}
	return r.header.Get("Location")
}

// Export to a download, purge, then import the download: every message is
// back, and each step said what it would do to how many.
func TestExportPurgeImport(t *testing.T) {
	f := newFixture(t, 6, nil)
	token := csrf(t, f)

	form := url.Values{"csrf": {token}, "op": {"export all"}, "queue": {f.dlq}, "match": {`reason contains "timeout"`}}
	if r := post(t, f, "/confirm", form, nil); !strings.Contains(r.body, "Export 3 messages matching reason contains") {
		t.Fatalf("the export's confirmation (HTTP %d):\n%s", r.status, r.body)
	}
	job := runAction(t, f, form, 3)
	if state := awaitJob(t, f, job); !strings.Contains(state, `"download":true`) || !strings.Contains(state, "exported 3 of the") {
		t.Fatalf("export: %s", state)
	}
	download := get(t, f, strings.Replace(job, "/job?", "/job/download?", 1))
	if download.status != http.StatusOK || strings.Count(download.body, "\n") != 3 || !strings.Contains(download.header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("download: HTTP %d, %s\n%s", download.status, download.header.Get("Content-Disposition"), download.body)
	}
	if n := depth(t, f, f.dlq); n != 6 {
		t.Fatalf("the export left %d messages, want 6", n)
	}

	purge := url.Values{"csrf": {token}, "op": {"purge all"}, "queue": {f.dlq}}
	r := post(t, f, "/confirm", purge, nil)
	if !strings.Contains(r.body, "delete the 6 messages counted in it now, for good") {
		t.Fatalf("the purge's confirmation:\n%s", r.body)
	}
	purge.Set("token", purgeToken(t, r.body))
	purge.Set("typed", f.dlq)
	if state := awaitJob(t, f, runAction(t, f, purge, 6)); !strings.Contains(state, "purged 6 of the 6 messages taken") {
		t.Fatalf("purge: %s", state)
	}
	if n := depth(t, f, f.dlq); n != 0 {
		t.Fatalf("the purge left %d messages", n)
	}

	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("csrf", token)
	_ = mw.WriteField("queue", f.dlq)
	fw, _ := mw.CreateFormFile("file", "saved.jsonl")
	_, _ = fw.Write([]byte(download.body))
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/import", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	r = do(t, req)
	if r.status != http.StatusOK || !strings.Contains(r.body, "Import 3 messages of the file saved.jsonl into "+f.dlq) {
		t.Fatalf("the import's confirmation (HTTP %d):\n%s", r.status, r.body)
	}
	upload := regexp.MustCompile(`name="upload" value="([0-9a-f]+)"`).FindStringSubmatch(r.body)
	if upload == nil {
		t.Fatal("no upload id on the confirmation")
	}
	imp := url.Values{"csrf": {token}, "op": {"import all"}, "queue": {f.dlq}, "upload": {upload[1]}}
	if state := awaitJob(t, f, runAction(t, f, imp, 3)); !strings.Contains(state, "saved.jsonl: imported 3 of the 3 messages taken") {
		t.Fatalf("import: %s", state)
	}
	if n := depth(t, f, f.dlq); n != 3 {
		t.Errorf("the import put %d messages in %s, want 3", n, f.dlq)
	}
	// The upload is used up: a second run of it is refused.
	if r := post(t, f, "/run", imp, nil); r.status != http.StatusBadRequest || !strings.Contains(r.body, "upload it again") {
		t.Errorf("a second import of the upload: HTTP %d\n%s", r.status, r.body)
	}
}

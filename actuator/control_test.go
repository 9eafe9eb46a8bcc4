package actuator_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/actuator"
)

// controlToken is the control token of the tests that set one.
const controlToken = "0123456789abcdef0123456789abcdef"

// status is a consumer's status as the control paths answer it.
type status struct {
	ID       string   `json:"id"`
	Queue    string   `json:"queue"`
	State    string   `json:"state"`
	PausedBy []string `json:"pausedBy"`
	Scale    struct {
		Concurrency int `json:"concurrency"`
		Prefetch    int `json:"prefetch"`
	} `json:"scale"`
	Running int            `json:"running"`
	Stats   map[string]int `json:"stats"`
}

type refusal struct {
	Error string `json:"error"`
}

// call sends a control request: a POST with body as JSON, unless header
// says otherwise (a nil header value deletes the header).
func call(t *testing.T, method, url, body string, header map[string]string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	return send(t, req)
}

func wantCode(t *testing.T, what string, r response, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("%s: %d %s, want %d", what, r.code, r.body, code)
	}
}

// controlled serves the actuator of a memory:// Conn with two consumers,
// orders and invoices, with opts; it returns its base URL.
func controlled(t *testing.T, opts ...actuator.Option) (string, *acemq.Conn) {
	t.Helper()
	conn := acemqtest.NewBroker(t).Connect(t)
	for _, q := range []string{"orders", "invoices"} {
		consume(t, conn, q, func(context.Context, acemq.Message[string]) acemq.Decision { return acemq.Accept() })
	}
	h, err := actuator.New(conn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h) // on 127.0.0.1
	t.Cleanup(srv.Close)
	return srv.URL, conn
}

// The consumer control lists the consumers, shows one, pauses, resumes and
// rescales it, each answering with the status after it.
func TestConsumerControl(t *testing.T) {
	base, conn := controlled(t)
	consumers := base + "/acemq-consumers"

	r := call(t, http.MethodGet, consumers, "", nil)
	wantCode(t, "list", r, http.StatusOK)
	list := decode[struct{ Consumers []status }](t, r)
	var ids []string
	for _, c := range list.Consumers {
		ids = append(ids, c.ID)
		if c.State != "running" || c.PausedBy == nil || len(c.PausedBy) != 0 {
			t.Errorf("%s: state %q, paused by %v, want running, paused by [] (not null)", c.ID, c.State, c.PausedBy)
		}
	}
	if !slices.Equal(ids, []string{"invoices", "orders"}) {
		t.Errorf("listed %q, want invoices and orders, sorted", ids)
	}
	if !strings.Contains(r.body, `"pausedBy":[]`) || !strings.Contains(r.body, `"retriedInConsumer":`) {
		t.Errorf("the list is not in the family's camelCase: %s", r.body)
	}

	r = call(t, http.MethodGet, consumers+"/orders", "", nil)
	wantCode(t, "show", r, http.StatusOK)
	if s := decode[status](t, r); s.ID != "orders" || s.Queue != "orders" {
		t.Errorf("showed %+v, want orders", s)
	}

	for range 2 { // pausing a paused consumer changes nothing
		r = call(t, http.MethodPost, consumers+"/orders/pause", "", nil)
		wantCode(t, "pause", r, http.StatusOK)
		if s := decode[status](t, r); s.State != "paused" || !slices.Equal(s.PausedBy, []string{"operator"}) {
			t.Errorf("after pause: %q by %q, want paused by operator", s.State, s.PausedBy)
		}
	}
	if got := conn.Consumer("orders").Status().State; got != acemq.ConsumerPaused {
		t.Errorf("the consumer is %s after the pause, want paused", got)
	}
	if got := conn.Consumer("invoices").Status().State; got != acemq.ConsumerRunning {
		t.Errorf("invoices is %s: pausing orders paused it", got)
	}

	r = call(t, http.MethodPost, consumers+"/orders/resume", "", nil)
	wantCode(t, "resume", r, http.StatusOK)
	if s := decode[status](t, r); s.State != "running" || len(s.PausedBy) != 0 {
		t.Errorf("after resume: %q by %q, want running", s.State, s.PausedBy)
	}

	r = call(t, http.MethodPost, consumers+"/orders/scale", `{"concurrency":8,"prefetch":40}`, nil)
	wantCode(t, "scale", r, http.StatusOK)
	if s := decode[status](t, r); s.Scale.Concurrency != 8 || s.Scale.Prefetch != 40 {
		t.Errorf("after scale: %+v, want 8 and 40", s.Scale)
	}
	r = call(t, http.MethodPost, consumers+"/orders/scale", `{"concurrency":2}`, nil)
	wantCode(t, "scale the concurrency alone", r, http.StatusOK)
	if s := decode[status](t, r); s.Scale.Concurrency != 2 || s.Scale.Prefetch != 40 {
		t.Errorf("after scaling the concurrency alone: %+v, want 2 and 40 kept", s.Scale)
	}
	if got := conn.Consumer("orders").Status().Scale; got != (acemq.Scale{Concurrency: 2, Prefetch: 40}) {
		t.Errorf("the consumer's scale is %+v, want 2 and 40", got)
	}
}

// A control request the actuator cannot do is refused with a status that
// says why and a message in JSON.
func TestConsumerControlRefusesBadInput(t *testing.T) {
	base, _ := controlled(t)
	consumers := base + "/acemq-consumers"
	for _, c := range []struct {
		name, method, path, body string
		code                     int
		says                     string
	}{
		{"unknown consumer", http.MethodGet, "/nobody", "", http.StatusNotFound, `no consumer "nobody"`},
		{"pause an unknown consumer", http.MethodPost, "/nobody/pause", "", http.StatusNotFound, `no consumer "nobody"`},
		{"an empty scale", http.MethodPost, "/orders/scale", "", http.StatusBadRequest, "the body is empty"},
		{"a scale that is not JSON", http.MethodPost, "/orders/scale", "concurrency=8", http.StatusBadRequest, "is not {"},
		{"an unknown field", http.MethodPost, "/orders/scale", `{"workers":8}`, http.StatusBadRequest, `unknown field "workers"`},
		{"a text number", http.MethodPost, "/orders/scale", `{"concurrency":"8"}`, http.StatusBadRequest, "is not {"},
		{"a negative scale", http.MethodPost, "/orders/scale", `{"concurrency":-1}`, http.StatusBadRequest, "negative"},
		{"nothing to change", http.MethodPost, "/orders/scale", `{"concurrency":0}`, http.StatusBadRequest, "above 0"},
		{"a prefetch beyond AMQP's", http.MethodPost, "/orders/scale", `{"prefetch":70000}`, http.StatusBadRequest, "prefetch is 70000"},
		{"two values", http.MethodPost, "/orders/scale", `{"concurrency":2}{"prefetch":4}`, http.StatusBadRequest, "more than one"},
		{"a large body", http.MethodPost, "/orders/scale", `{"concurrency":2` + strings.Repeat(" ", 8<<10) + `}`, http.StatusBadRequest, "too large"},
	} {
		r := call(t, c.method, consumers+c.path, c.body, nil)
		if r.code != c.code {
			t.Errorf("%s: %d %s, want %d", c.name, r.code, r.body, c.code)
			continue
		}
		if got := decode[refusal](t, r).Error; !strings.Contains(got, c.says) {
			t.Errorf("%s: %q does not say %q", c.name, got, c.says)
		}
	}
	for _, c := range []struct{ method, path, allow string }{
		{http.MethodGet, "/orders/pause", "POST"},
		{http.MethodGet, "/orders/scale", "POST"},
		{http.MethodPost, "", "GET, HEAD"},
		{http.MethodDelete, "/orders", "GET, HEAD"},
	} {
		r := call(t, c.method, consumers+c.path, "", nil)
		if r.code != http.StatusMethodNotAllowed || r.header.Get("Allow") != c.allow {
			t.Errorf("%s %s: %d, Allow %q, want 405 with Allow %q", c.method, c.path, r.code, r.header.Get("Allow"), c.allow)
		}
	}
}

// Control is let in from this machine to its loopback address with a
// loopback Host, or with the control token; never from another site's
// page, and never as a POST not declared JSON.
func TestConsumerControlRefusals(t *testing.T) {
	for _, c := range []struct {
		name   string
		token  string // the actuator's control token
		header map[string]string
		code   int
		says   string
	}{
		{"loopback", "", nil, http.StatusOK, ""},
		{"loopback with a token configured", controlToken, nil, http.StatusOK, ""},
		{"the right token", controlToken, map[string]string{"Authorization": "Bearer " + controlToken}, http.StatusOK, ""},
		{"a wrong token", controlToken, map[string]string{"Authorization": "Bearer " + strings.Repeat("x", 32)}, http.StatusUnauthorized, "wrong"},
		{"a token where none is configured", "", map[string]string{"Authorization": "Bearer " + controlToken}, http.StatusUnauthorized, "no control token"},
		{"a rebound name", "", map[string]string{"Host": "evil.example:9464"}, http.StatusForbidden, "only from this machine"},
		{"a rebound name, with a token configured", controlToken, map[string]string{"Host": "evil.example:9464"}, http.StatusUnauthorized, "needs Authorization: Bearer"},
		{"through a proxy on this machine", "", map[string]string{"X-Forwarded-For": "203.0.113.9"}, http.StatusForbidden, "only from this machine"},
		{"through a proxy, with the token", controlToken, map[string]string{"X-Forwarded-For": "203.0.113.9", "Authorization": "Bearer " + controlToken}, http.StatusOK, ""},
		{"another site's page", "", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden, "another site"},
		{"another site's page, with the token", controlToken, map[string]string{"Sec-Fetch-Site": "cross-site", "Authorization": "Bearer " + controlToken}, http.StatusForbidden, "another site"},
		{"another origin", "", map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden, "another site"},
		{"a form", "", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, http.StatusUnsupportedMediaType, "Content-Type: application/json"},
		{"a text/plain post", "", map[string]string{"Content-Type": "text/plain"}, http.StatusUnsupportedMediaType, "Content-Type: application/json"},
		{"no content type", "", map[string]string{"Content-Type": ""}, http.StatusUnsupportedMediaType, "Content-Type: application/json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var opts []actuator.Option
			if c.token != "" {
				opts = append(opts, actuator.WithControlToken(c.token))
			}
			base, conn := controlled(t, opts...)
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/acemq-consumers/orders/pause", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json; charset=utf-8")
			for k, v := range c.header {
				switch {
				case k == "Host":
					req.Host = v
				case v == "":
					req.Header.Del(k)
				default:
					req.Header.Set(k, v)
				}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			r := response{resp.StatusCode, resp.Header, string(body)}
			wantCode(t, c.name, r, c.code)
			paused := conn.Consumer("orders").Status().State == acemq.ConsumerPaused
			if c.code != http.StatusOK {
				if got := decode[refusal](t, r).Error; !strings.Contains(got, c.says) {
					t.Errorf("%q does not say %q", got, c.says)
				}
				if paused {
					t.Error("a refused request paused the consumer")
				}
			} else if !paused {
				t.Error("the consumer is not paused")
			}
			if c.code == http.StatusUnauthorized && c.token != "" && r.header.Get("WWW-Authenticate") == "" {
				t.Error("a 401 without WWW-Authenticate")
			}
		})
	}
}

// A request from beyond this machine is let in with the token alone (the
// handler called with a remote address elsewhere, as behind a listener on
// every interface).
func TestConsumerControlFromElsewhere(t *testing.T) {
	conn := acemqtest.NewBroker(t).Connect(t)
	consume(t, conn, "orders", func(context.Context, acemq.Message[string]) acemq.Decision { return acemq.Accept() })
	h, err := actuator.New(conn, actuator.WithControlToken(controlToken))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		auth string
		code int
	}{{"", http.StatusUnauthorized}, {"Bearer " + controlToken, http.StatusOK}} {
		req := httptest.NewRequest(http.MethodGet, "http://10.0.0.5:9464/acemq-consumers", nil)
		req.RemoteAddr = "10.0.0.9:40000"
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != c.code {
			t.Errorf("from 10.0.0.9 with %q: %d %s, want %d", c.auth, w.Code, w.Body, c.code)
		}
	}
	// Health and info stay open to the fleet's probes.
	req := httptest.NewRequest(http.MethodGet, "http://10.0.0.5:9464/acemq-info", nil)
	req.RemoteAddr = "10.0.0.9:40000"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		t.Errorf("/acemq-info from 10.0.0.9: %d, want 200", w.Code)
	}
}

func TestWithControlTokenRefusesAShortToken(t *testing.T) {
	conn := acemqtest.NewBroker(t).Connect(t)
	if _, err := actuator.New(conn, actuator.WithControlToken("short")); err == nil || !strings.Contains(err.Error(), "at least 16") {
		t.Errorf("New with a 5-character token: %v, want an error asking for 16", err)
	}
}

// A paused consumer is paused, not failing: the health stays up, says how
// many are paused (parts.pausedConsumers), and the service stays ready.
func TestHealthShowsPausedConsumers(t *testing.T) {
	base, _ := controlled(t)
	wantCode(t, "pause", call(t, http.MethodPost, base+"/acemq-consumers/orders/pause", "", nil), http.StatusOK)

	r := do(t, http.MethodGet, base+"/acemq-health")
	h := decode[health](t, r)
	if r.code != http.StatusOK || h.Status != "up" || h.Parts["consumers"]["status"] != "up" {
		t.Errorf("with a paused consumer: %d, %s, consumers %v; want 200, up", r.code, h.Status, h.Parts["consumers"])
	}
	if got, want := h.Parts["consumers"]["detail"], "1 consumer running, 1 paused"; got != want {
		t.Errorf("consumers detail %q, want %q", got, want)
	}
	if got := decode[struct {
		Parts struct {
			PausedConsumers *int `json:"pausedConsumers"`
		} `json:"parts"`
	}](t, r).Parts.PausedConsumers; got == nil || *got != 1 {
		t.Errorf("parts.pausedConsumers %v, want 1: %s", got, r.body)
	}
	if r := do(t, http.MethodGet, base+"/readyz"); r.code != http.StatusOK {
		t.Errorf("/readyz with a paused consumer: %d %s, want 200", r.code, r.body)
	}

	wantCode(t, "resume", call(t, http.MethodPost, base+"/acemq-consumers/orders/resume", "", nil), http.StatusOK)
	r = do(t, http.MethodGet, base+"/acemq-health")
	if got, want := decode[health](t, r).Parts["consumers"]["detail"], "2 consumers running"; got != want {
		t.Errorf("after resume: consumers detail %q, want %q", got, want)
	}
	if !strings.Contains(r.body, `"pausedConsumers":0`) {
		t.Errorf("after resume the health lacks pausedConsumers 0: %s", r.body)
	}
}

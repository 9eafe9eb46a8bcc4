package actuator_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqprom"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/actuator"
	"github.com/acemq-go/acemq/request"
	"github.com/acemq-go/acemq/transport"
)

// response is one answer of the actuator.
type response struct {
	code   int
	header http.Header
	body   string
}

func do(t *testing.T, method, url string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return send(t, req)
}

// send sends req and reads its whole answer.
func send(t *testing.T, req *http.Request) response {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, string(body)}
}

// health is /acemq-health's JSON.
type health struct {
	Status  string    `json:"status"`
	Detail  string    `json:"detail"`
	Checked time.Time `json:"checked"`
	Parts   parts     `json:"parts"`
}

// parts are the health's parts, each {"status":…,"detail":…}, without the
// family's blocked and blockedReason beside them (familyHealth reads those).
type parts map[string]map[string]string

func (p *parts) UnmarshalJSON(b []byte) error {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	*p = parts{}
	for name, v := range all {
		var part map[string]string
		if json.Unmarshal(v, &part) == nil {
			(*p)[name] = part
		}
	}
	return nil
}

func decode[T any](t *testing.T, r response) T {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	var v T
	if err := json.Unmarshal([]byte(r.body), &v); err != nil {
		t.Fatalf("the body %q: %v", r.body, err)
	}
	return v
}

// serve mounts the actuator of conn on a test server, with the metrics of
// acemqprom when reg is not nil.
func serve(t *testing.T, conn *acemq.Conn, reg *prometheus.Registry) string {
	t.Helper()
	var opts []actuator.Option
	if reg != nil {
		opts = append(opts, actuator.WithMetrics(promhttp.HandlerFor(reg, promhttp.HandlerOpts{})))
	}
	h, err := actuator.New(conn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestEndpoints(t *testing.T) {
	b := acemqtest.NewBroker(t)
	reg := prometheus.NewRegistry()
	metrics, err := acemqprom.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	conn := b.Connect(t, acemq.WithObserver(metrics))
	if err := conn.Transport().DeclareQueue(t.Context(), transport.Queue{Name: "orders", Type: transport.Classic, Durable: true}); err != nil {
		t.Fatal(err)
	}
	c, err := acemq.Consume(t.Context(), conn, "orders", func(context.Context, acemq.Message[string]) acemq.Decision { return acemq.Accept() })
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	client, err := request.NewClient(t.Context(), conn) // so that the info lists request-reply
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close(context.Background())
	base := serve(t, conn, reg)

	before := time.Now()
	r := do(t, http.MethodGet, base+"/acemq-health")
	h := decode[health](t, r)
	if r.code != http.StatusOK || h.Status != "up" || !strings.HasPrefix(r.body, `{"status":"up","detail":`) {
		t.Errorf("GET /acemq-health: %d %s, want 200 and up, status first", r.code, r.body)
	}
	if h.Checked.Before(before.Add(-time.Second)) || h.Checked.After(time.Now().Add(time.Second)) || h.Checked.Location() != time.UTC {
		t.Errorf("checked %v, want the time of the request, in UTC", h.Checked)
	}
	want := map[string]map[string]string{
		"connection": {"status": "up", "detail": "connected to " + b.URL},
		"consumers":  {"status": "up", "detail": "1 consumer running"},
	}
	for name, p := range want {
		if !equalMaps(h.Parts[name], p) {
			t.Errorf("part %s: %v, want %v", name, h.Parts[name], p)
		}
	}
	if br := h.Parts["broker"]; br["status"] != "up" || !strings.HasPrefix(br["detail"], "answered a round trip in ") || len(br) != 2 {
		t.Errorf("part broker: %v, want up, with the round trip", br)
	}
	if len(h.Parts) != 3 {
		t.Errorf("parts %v, want connection, broker and consumers", h.Parts)
	}
	if wantDetail := "connected to " + b.URL + "; " + h.Parts["broker"]["detail"] + "; 1 consumer running"; h.Detail != wantDetail {
		t.Errorf("detail %q, want every part's: %q", h.Detail, wantDetail)
	}

	r = do(t, http.MethodGet, base+"/acemq-info")
	info := decode[map[string]any](t, r)
	if r.code != http.StatusOK || !strings.HasPrefix(r.body, `{"library":"github.com/acemq-go/acemq","version":`) {
		t.Errorf("GET /acemq-info: %d %s", r.code, r.body)
	}
	if v, _ := info["version"].(string); v == "" || v == "(devel)" {
		t.Errorf("version %q, want the module's or devel", v)
	}
	if info["transport"] != "memory" {
		t.Errorf("transport %v, want memory", info["transport"])
	}
	var caps []string
	for _, c := range info["capabilities"].([]any) {
		caps = append(caps, c.(string))
	}
	if wantCaps := []string{"at-least-once-rungs", "dead-letter-queues", "publisher-confirms", "request-reply", "retry-ladder"}; !slices.Equal(caps, wantCaps) {
		t.Errorf("capabilities %q, want %q: every service's, and request-reply, which this test uses", caps, wantCaps)
	}

	r = do(t, http.MethodGet, base+"/acemq-metrics")
	if r.code != http.StatusOK || !strings.Contains(r.body, "\nacemq_connection_state{state=\"connected\"} 1\n") || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") {
		t.Errorf("GET /acemq-metrics: %d %s\n%s", r.code, r.header, r.body)
	}
	for path, want := range map[string]string{"/livez": `"live":true`, "/readyz": `"ready":true`} {
		if r := do(t, http.MethodGet, base+path); r.code != http.StatusOK || !strings.Contains(r.body, want) {
			t.Errorf("GET %s: %d %s, want 200 with %s", path, r.code, r.body, want)
		}
	}
	if r := do(t, http.MethodGet, base+"/acemq-nothing"); r.code != http.StatusNotFound {
		t.Errorf("GET /acemq-nothing: %d, want 404", r.code)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}

// GET and HEAD only: HEAD answers as GET does, without a body; any other
// method is 405 with Allow.
func TestMethods(t *testing.T) {
	conn := acemqtest.NewBroker(t).Connect(t)
	base := serve(t, conn, prometheus.NewRegistry())
	for _, path := range []string{"/acemq-metrics", "/acemq-health", "/acemq-info", "/livez", "/readyz"} {
		get := do(t, http.MethodGet, base+path)
		head := do(t, http.MethodHead, base+path)
		if head.code != http.StatusOK || head.body != "" || head.header.Get("Content-Type") != get.header.Get("Content-Type") {
			t.Errorf("HEAD %s: %d %q %s, want 200 with GET's content type and no body", path, head.code, head.body, head.header)
		}
		for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions} {
			r := do(t, m, base+path)
			if r.code != http.StatusMethodNotAllowed || r.header.Get("Allow") != "GET, HEAD" {
				t.Errorf("%s %s: %d, Allow %q; want 405 and Allow: GET, HEAD", m, path, r.code, r.header.Get("Allow"))
			}
		}
	}
}

// Without WithMetrics, there are no metrics to serve.
func TestNoMetrics(t *testing.T) {
	base := serve(t, acemqtest.NewBroker(t).Connect(t), nil)
	if r := do(t, http.MethodGet, base+"/acemq-metrics"); r.code != http.StatusNotFound {
		t.Errorf("GET /acemq-metrics without metrics: %d, want 404", r.code)
	}
}

func TestHealthAfterClose(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	base := serve(t, conn, nil)
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	r := do(t, http.MethodGet, base+"/acemq-health")
	h := decode[health](t, r)
	closed := "the connection to " + b.URL + " is closed"
	if r.code != http.StatusServiceUnavailable || h.Status != "down" || h.Detail != closed+"; not asked: the connection is closed" ||
		h.Parts["connection"]["status"] != "down" || h.Parts["broker"]["status"] != "down" || h.Parts["consumers"]["status"] != "up" {
		t.Errorf("GET /acemq-health after Close: %d %s, want 503 and down", r.code, r.body)
	}
}

func TestNewRefusesBadInput(t *testing.T) {
	conn := acemqtest.NewBroker(t).Connect(t)
	for _, c := range []struct {
		name string
		conn *acemq.Conn
		opts []actuator.Option
		want string
	}{
		{"nil Conn", nil, nil, "actuator: the Conn is nil"},
		{"zero timeout", conn, []actuator.Option{actuator.WithHealthTimeout(0)}, "actuator: the health timeout is 0s but must be positive"},
		{"negative slow", conn, []actuator.Option{actuator.WithSlowRoundTrip(-time.Second)}, "actuator: the slow round trip is -1s but must be positive"},
		{"slow above timeout", conn, []actuator.Option{actuator.WithHealthTimeout(time.Second), actuator.WithSlowRoundTrip(time.Second)},
			"actuator: the slow round trip (1s) must be shorter than the health timeout (1s)"},
		{"nil metrics", conn, []actuator.Option{actuator.WithMetrics(nil)}, "actuator: WithMetrics: the handler is nil"},
		{"nil Option", conn, []actuator.Option{nil}, "actuator: a nil Option"},
	} {
		if h, err := actuator.New(c.conn, c.opts...); err == nil || err.Error() != c.want || h != nil {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// Serve answers until its context ends, then returns nil and listens no
// more.
func TestServer(t *testing.T) {
	conn := acemqtest.NewBroker(t).Connect(t)
	h, err := actuator.New(conn)
	if err != nil {
		t.Fatal(err)
	}
	s, err := actuator.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") || s.URL() != "http://"+s.Addr().String() {
		t.Errorf("URL %q for %s", s.URL(), s.Addr())
	}
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, h) }()
	if r := do(t, http.MethodGet, s.URL()+"/acemq-info"); r.code != http.StatusOK {
		t.Errorf("GET /acemq-info: %d %s", r.code, r.body)
	}
	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve after its context ended: %v, want nil", err)
	}
	if _, err := http.Get(s.URL() + "/acemq-info"); err == nil {
		t.Error("the Server still answers after Serve returned")
	}
	if _, err := actuator.Listen(s.Addr().String() + "0"); err == nil || !strings.HasPrefix(err.Error(), "actuator: listen tcp") {
		t.Errorf("Listen on a bad port: %v, want the listen error", err)
	}
}

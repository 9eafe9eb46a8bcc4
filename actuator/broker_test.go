package actuator_test

import (
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
)

// forwarder is a TCP forwarder between a Conn and the broker: cut closes
// every connection through it and refuses new ones, as a broker that went
// away; restore lets them through again.
type forwarder struct {
	listener net.Listener
	target   string
	mu       sync.Mutex
	cut      bool
	conns    map[net.Conn]bool
}

func newForwarder(t *testing.T, target string) *forwarder {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &forwarder{listener: l, target: target, conns: map[net.Conn]bool{}}
	go f.accept()
	t.Cleanup(func() {
		_ = l.Close()
		f.setCut(true)
	})
	return f
}

func (f *forwarder) accept() {
	for {
		client, err := f.listener.Accept()
		if err != nil {
			return
		}
		go f.forward(client)
	}
}

func (f *forwarder) forward(client net.Conn) {
	defer client.Close()
	if !f.track(client) {
		return
	}
	defer f.untrack(client)
	broker, err := net.Dial("tcp", f.target)
	if err != nil {
		return
	}
	defer broker.Close()
	if !f.track(broker) {
		return
	}
	defer f.untrack(broker)
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(broker, client); done <- struct{}{} }()
	go func() { _, _ = io.Copy(client, broker); done <- struct{}{} }()
	<-done // either side closing ends both
}

// track keeps c to close on a cut; false when cut already.
func (f *forwarder) track(c net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cut {
		return false
	}
	f.conns[c] = true
	return true
}

func (f *forwarder) untrack(c net.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.conns, c)
}

func (f *forwarder) setCut(cut bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cut = cut
	if cut {
		for c := range f.conns {
			_ = c.Close()
		}
		clear(f.conns)
	}
}

// /acemq-health on RabbitMQ: 200 and up, then 503 and down once the broker
// goes away (every connection through the forwarder closed, and no new one
// let through), then 200 and up again when it is back.
func TestHealthWhenTheBrokerGoesAway(t *testing.T) {
	brokerURL := brokertest.URL(t)
	u, err := url.Parse(brokerURL)
	if err != nil {
		t.Fatal(err)
	}
	fwd := newForwarder(t, u.Host)
	u.Host = fwd.listener.Addr().String()
	conn, err := acemq.Connect(t.Context(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	base := serve(t, conn, nil)
	password, _ := u.User.Password()

	// await polls /acemq-health until it answers code with status, the
	// connection part's too, and returns that answer; it fails the test at
	// the deadline. (Just after the broker went away, the Conn may not know
	// yet: the round trip fails and the health is down, its connection
	// still up.)
	await := func(what string, code int, status string) health {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			r := do(t, http.MethodGet, base+"/acemq-health")
			if strings.Contains(r.body, ":"+password+"@") {
				t.Fatalf("the health holds the broker's password: %s", r.body)
			}
			h := decode[health](t, r)
			if r.code == code && h.Status == status && h.Parts["connection"]["status"] == status {
				t.Logf("%s: %d %s", what, r.code, strings.TrimSpace(r.body))
				return h
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: /acemq-health still answers %d %s after 30s, want %d and %s", what, r.code, r.body, code, status)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	h := await("connected", http.StatusOK, "up")
	if h.Parts["connection"]["detail"] != "connected to "+conn.Health(t.Context()).Broker || h.Parts["broker"]["status"] != "up" {
		t.Errorf("the health of a new connection: %+v", h)
	}

	fwd.setCut(true)
	h = await("the broker gone", http.StatusServiceUnavailable, "down")
	if c := h.Parts["connection"]; c["status"] != "down" || !strings.HasPrefix(c["detail"], "reconnecting to amqp://") {
		t.Errorf("the connection part with the broker gone: %v, want down and reconnecting", c)
	}
	if b := h.Parts["broker"]; b["status"] != "down" || b["detail"] != "not asked: the connection is down" {
		t.Errorf("the broker part with the broker gone: %v, want down, not asked", b)
	}

	fwd.setCut(false)
	h = await("the broker back", http.StatusOK, "up")
	if c := h.Parts["connection"]["detail"]; !strings.HasSuffix(c, "(recovered 1 time)") {
		t.Errorf("the connection part once back: %q, want it recovered once", c)
	}
}

package acemq_test

import (
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/transport/rabbitmq"
)

// The first URL's node is down, so Connect goes on to the fallback: Health,
// String and State name the fallback, the address in use, not the URL
// given first.
func TestHealthNamesTheAddressInUse(t *testing.T) {
	live := brokertest.URL(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(live)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = ln.Addr().String()
	ln.Close() // nothing listens there now
	dead := u.String()

	conn, err := acemq.Connect(t.Context(), dead, acemq.WithFallbackURLs(live))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	want := rabbitmq.RedactURL(live)
	if h := conn.Health(t.Context()); h.Broker != want || !h.Ready() {
		t.Errorf("Health: %+v, want ready on %s", h, want)
	}
	if got := conn.State().Address; got != want {
		t.Errorf("State().Address = %q, want %q", got, want)
	}
	if s := conn.String(); !strings.Contains(s, want) {
		t.Errorf("String() = %q, want it to name %s", s, want)
	}
}

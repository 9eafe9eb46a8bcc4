// Package brokertest finds the RabbitMQ broker that integration tests run
// against and reaches into it through the management HTTP API: forcing
// connections closed (to test recovery) and deleting what a test declared.
//
// Under CI (CI=true) a broker test that cannot reach its broker fails; on a
// developer machine it skips, saying how to start one.
package brokertest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/contract"
	mgmt "github.com/acemq-go/acemq/internal/management"
	"github.com/acemq-go/acemq/internal/testing/reachtest"
)

// DefaultURL is the broker scripts/rabbitmq.sh starts.
const DefaultURL = "amqp://guest:guest@localhost:5672/"

const howToStart = "start one with `make test` (or `bash scripts/rabbitmq.sh` and ACEMQ_TEST_URL=" + DefaultURL + ")"

// configuredURL is ACEMQ_TEST_URL, or "". There is no default, not even
// under CI: a fixed port there could be another checkout's broker (make
// test sets ACEMQ_TEST_URL to its own node's).
func configuredURL() string { return os.Getenv("ACEMQ_TEST_URL") }

// unavailable fails the test under CI and skips it elsewhere.
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	reachtest.Unavailable(t, "broker", fmt.Sprintf(format, args...))
}

// URL returns the AMQP URL of the test broker, ACEMQ_TEST_URL. It skips
// the test (fails it under CI) when that is not set or no broker answers
// there within a few seconds.
func URL(t testing.TB) string {
	t.Helper()
	u := configuredURL()
	if u == "" {
		unavailable(t, "ACEMQ_TEST_URL is not set, so there is no broker to test against; %s", howToStart)
	}
	if err := reachtest.Probe(u, probe); err != nil {
		unavailable(t, "no RabbitMQ broker at %s: %v; %s", reachtest.Redact(u), err, howToStart)
	}
	return u
}

// probe checks that something speaking AMQP 0-9-1 answers at u: it sends the
// protocol header and expects the first byte of a frame (connection.start).
func probe(u string) error {
	p, err := url.Parse(u)
	if err != nil {
		return fmt.Errorf("cannot parse the URL")
	}
	port := p.Port()
	if port == "" {
		port = "5672"
		if p.Scheme == "amqps" {
			port = "5671"
		}
	}
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(p.Hostname(), port), 3*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	if p.Scheme == "amqps" {
		return nil // a TLS handshake needs the test's own configuration
	}
	_ = conn.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := conn.Write([]byte("AMQP\x00\x00\x09\x01")); err != nil {
		return err
	}
	b := make([]byte, 1)
	if _, err := io.ReadFull(conn, b); err != nil {
		return fmt.Errorf("no AMQP answer: %w", err)
	}
	if b[0] != 1 {
		return fmt.Errorf("the server does not speak AMQP 0-9-1")
	}
	return nil
}

// UniqueName returns a queue or exchange name no other test (nor an earlier
// run on the same persistent broker) uses: prefix, the test's name and a
// random suffix. When the test ends, a queue and an exchange of that name are
// deleted through the test broker's management API (ManagementURL),
// whatever the test left behind.
func UniqueName(t testing.TB, prefix string) string {
	t.Helper()
	e, _ := endpoint() // a URL that does not parse fails the deletions, which say so
	return UniqueNameOn(t, prefix, e.Vhost, ManagementURL())
}

// UniqueNameOn is UniqueName for the vhost of another broker, such as a
// cluster: the deletions go to the first of managementURLs (with their
// credentials) that answers, and to no other broker.
func UniqueNameOn(t testing.TB, prefix, vhost string, managementURLs ...string) string {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	test := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, t.Name())
	if len(test) > 120 {
		test = test[:120]
	}
	name := prefix + "." + test + "." + hex.EncodeToString(b[:])
	deleteWhenDone(t, name, vhost, managementURLs)
	return name
}

// DeleteWhenDone deletes the queues and exchanges of these names on the
// test broker when the test ends, as UniqueName does its own: for names
// made from one (its Q.dlq, say).
func DeleteWhenDone(t testing.TB, names ...string) {
	t.Helper()
	e, _ := endpoint()
	for _, name := range names {
		deleteWhenDone(t, name, e.Vhost, []string{ManagementURL()})
	}
}

func deleteWhenDone(t testing.TB, name, vhost string, managementURLs []string) {
	t.Cleanup(func() {
		for _, kind := range []string{"queues", "exchanges"} {
			path := "/api/" + kind + "/" + url.PathEscape(vhost) + "/" + url.PathEscape(name)
			err := errors.New("no management URL")
			for _, base := range managementURLs {
				var resp *http.Response
				if resp, err = management(context.Background(), base, http.MethodDelete, path, nil); err == nil {
					resp.Body.Close()
					break
				}
			}
			if err != nil {
				t.Logf("brokertest: deleting %s %s: %v", kind, name, err)
			}
		}
	})
}

// VhostURL makes a vhost of the test's own on the test broker, open to the
// test broker's user, and returns the AMQP URL of it; the vhost, with all
// it holds, is deleted when the test ends. For a test that must see a
// broker with nothing of other tests on it (the console's overview).
func VhostURL(t testing.TB) string {
	t.Helper()
	base := URL(t)
	e, err := endpoint()
	if err != nil {
		t.Fatalf("brokertest: %v", err)
	}
	vhost := UniqueName(t, "vhost")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	perms, _ := json.Marshal(map[string]string{"configure": ".*", "write": ".*", "read": ".*"})
	for _, r := range []struct {
		path string
		body []byte
	}{
		{"/api/vhosts/" + url.PathEscape(vhost), []byte("{}")},
		{"/api/permissions/" + url.PathEscape(vhost) + "/" + url.PathEscape(e.Username), perms},
	} {
		resp, err := management(ctx, ManagementURL(), http.MethodPut, r.path, r.body)
		if err != nil {
			t.Fatalf("brokertest: making vhost %s: %v", vhost, err)
		}
		resp.Body.Close()
	}
	t.Cleanup(func() {
		resp, err := management(context.Background(), ManagementURL(), http.MethodDelete, "/api/vhosts/"+url.PathEscape(vhost), nil)
		if err != nil {
			t.Logf("brokertest: deleting vhost %s: %v", vhost, err)
			return
		}
		resp.Body.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("brokertest: %v", err)
	}
	u.Path, u.RawPath = "/"+vhost, "/"+url.PathEscape(vhost)
	return u.String()
}

// CloseAllConnections forces every client connection to the broker closed,
// as a network failure or an operator would, through the management API
// (no Erlang cookie needed). Connections of tests running in other packages
// close too; prefer CloseConnections with a connection name of the test's own.
func CloseAllConnections(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	conns, err := listConnections(ctx, ManagementURL())
	if err != nil {
		unavailable(t, "brokertest: listing connections through the management API: %v", err)
	}
	for _, c := range conns {
		if err := closeConnection(ctx, ManagementURL(), c.Name); err != nil {
			t.Fatalf("brokertest: %v", err)
		}
	}
}

// CloseConnections forces closed the client connections whose client-provided
// connection names are names, as CloseNamed does; it fails the test when one
// does not show up.
func CloseConnections(t testing.TB, names ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := CloseNamed(ctx, ManagementURL(), names...); err != nil {
		t.Fatalf("brokertest: %v", err)
	}
}

// AwaitConnections waits (15s at most) until the management API lists a
// connection of each client-provided name of names, and fails the test
// when one does not show up.
func AwaitConnections(t testing.TB, names ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := awaitListed(ctx, ManagementURL(), names); err != nil {
		t.Fatalf("brokertest: %v", err)
	}
}

// CloseNamed forces closed, through the management API at managementURL
// (with its credentials), every connection whose client-provided name is one
// of names. It first waits (15s at most) until each name is listed, since the
// API lists a new connection only once the broker has emitted its
// statistics, then closes them back to back, and returns the time the first
// close was sent.
func CloseNamed(ctx context.Context, managementURL string, names ...string) (time.Time, error) {
	targets, err := awaitListed(ctx, managementURL, names)
	if err != nil {
		return time.Time{}, err
	}
	first := time.Now()
	for _, c := range targets {
		if err := closeConnection(ctx, managementURL, c); err != nil {
			return first, err
		}
	}
	return first, nil
}

// awaitListed waits (15s at most) until the management API at
// managementURL lists a connection of each client-provided name of names,
// and returns the broker's names of every connection so named.
func awaitListed(ctx context.Context, managementURL string, names []string) ([]string, error) {
	deadline := time.Now().Add(15 * time.Second)
	for {
		conns, err := listConnections(ctx, managementURL)
		if err != nil {
			return nil, fmt.Errorf("listing connections through the management API: %w", err)
		}
		var targets []string
		seen := map[string]bool{}
		for _, c := range conns {
			for _, n := range names {
				if c.UserProvidedName == n {
					targets = append(targets, c.Name)
					seen[n] = true
				}
			}
		}
		if len(seen) == len(names) {
			return targets, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the management API did not list the connections %q within 15s (listed: %v)", names, seen)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func closeConnection(ctx context.Context, managementURL, name string) error {
	resp, err := management(ctx, managementURL, http.MethodDelete, "/api/connections/"+url.PathEscape(name), nil)
	if err != nil {
		return fmt.Errorf("closing connection %q: %w", name, err)
	}
	return resp.Body.Close()
}

type connection struct {
	Name             string `json:"name"`
	UserProvidedName string `json:"user_provided_name"`
}

func listConnections(ctx context.Context, managementURL string) ([]connection, error) {
	resp, err := management(ctx, managementURL, http.MethodGet, "/api/connections?columns=name,user_provided_name", nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var conns []connection
	if err := json.NewDecoder(resp.Body).Decode(&conns); err != nil {
		return nil, fmt.Errorf("decoding /api/connections: %w", err)
	}
	return conns, nil
}

// AwaitingDeadLetter is how many messages a quorum queue of the test
// broker's vhost has dead-lettered at least once but not yet seen confirmed
// by their target (the management API's messages_dlx): an at-least-once
// dead letter that its target refused or could not take yet. AMQP's
// passive declare does not count them. The figure is as of the broker's
// last statistics, emitted every 5s by default.
func AwaitingDeadLetter(t testing.TB, queue string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	// The whole queue object: with ?columns= the API answers [] while the
	// queue has no messages_dlx statistic yet.
	URL(t)
	e, err := endpoint()
	if err != nil {
		t.Fatalf("brokertest: %v", err)
	}
	path := "/api/queues/" + url.PathEscape(e.Vhost) + "/" + url.PathEscape(queue)
	var q struct {
		MessagesDLX int `json:"messages_dlx"`
	}
	if err := GetJSON(ctx, ManagementURL(), path, &q); err != nil {
		t.Fatalf("brokertest: reading queue %s through the management API: %v", queue, err)
	}
	return q.MessagesDLX
}

// GetJSON decodes into into the JSON the management API at base (with its
// credentials: http://user:pass@host:port) answers at path; any status but
// 200 is an error.
func GetJSON(ctx context.Context, base, path string, into any) error {
	resp, err := management(ctx, base, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(into)
}

// ManagementURL is the test broker's management API with its credentials:
// ACEMQ_TEST_MANAGEMENT_URL, else found from the test broker's AMQP URL as
// the CLI finds it (admin.EndpointFor): its host on port 15672, with its
// credentials. It is "" when either URL does not parse.
func ManagementURL() string {
	e, err := endpoint()
	if err != nil {
		return ""
	}
	u, err := url.Parse(e.URL)
	if err != nil {
		return ""
	}
	u.User = url.UserPassword(e.Username, e.Password)
	return u.String()
}

// endpoint is the test broker's management API and vhost: from
// ACEMQ_TEST_MANAGEMENT_URL and the AMQP URL (DefaultURL when none is
// configured), by the CLI's derivation.
func endpoint() (mgmt.Endpoint, error) {
	amqpURL := configuredURL()
	if amqpURL == "" {
		amqpURL = DefaultURL
	}
	return mgmt.For(amqpURL, os.Getenv("ACEMQ_TEST_MANAGEMENT_URL"))
}

// management sends one request to the management API at base, with a
// JSON body if any; a 404 counts as done (what was to be deleted is gone),
// any other non-2xx status is an error.
func management(ctx context.Context, base, method, path string, body []byte) (*http.Response, error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("cannot parse the management URL %q", reachtest.Redact(base))
	}
	user := u.User
	u.User = nil
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(u.String(), "/")+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", contract.ContentTypeJSON)
	}
	if pass, ok := user.Password(); ok {
		req.SetBasicAuth(user.Username(), pass)
	}
	req.Header.Set("X-Reason", "closed by a test (brokertest)")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 && resp.StatusCode != http.StatusNotFound {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, body)
	}
	return resp, nil
}

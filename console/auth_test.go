package console_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq-go/acemq/console"
	"github.com/acemq-go/acemq/internal/devcert"
)

// clock is a console's Now that the test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// getWith GETs path with edit applied to the request.
func getWith(t *testing.T, f fixture, path string, edit func(*http.Request)) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	edit(req)
	return do(t, req)
}

// withCookie sends the cookie of a Set-Cookie header.
func withCookie(setCookie string) func(*http.Request) {
	return func(r *http.Request) { r.Header.Set("Cookie", strings.Split(setCookie, ";")[0]) }
}

// signIn gives the token on the login page and returns the session's
// Set-Cookie.
func signIn(t *testing.T, f fixture, token string) string {
	t.Helper()
	r := post(t, f, "/login", url.Values{"token": {token}}, nil)
	if r.status != http.StatusSeeOther || r.header.Get("Set-Cookie") == "" {
		t.Fatalf("signing in: HTTP %d, Set-Cookie %q", r.status, r.header.Get("Set-Cookie"))
	}
	return r.header.Get("Set-Cookie")
}

// Each sign-in is a session of its own, with its own CSRF token; a
// sign-out ends that one only; a session ends after its lifetime; the log
// names each by its short id.
func TestSessionsArePerBrowser(t *testing.T) {
	var logs logBuffer
	clk := &clock{t: time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)}
	f := newFixture(t, 1, func(c *console.Config) {
		c.Token, c.Now = "the-token", clk.now
		logTo(&logs)(c)
	})
	a, b := signIn(t, f, "the-token"), signIn(t, f, "the-token")
	if a == b {
		t.Fatal("two sign-ins got the same cookie")
	}
	for _, cookie := range []string{a, b} {
		if !strings.Contains(cookie, "HttpOnly") || !strings.Contains(cookie, "SameSite=Strict") || strings.Contains(cookie, "Secure") {
			t.Errorf("a session cookie over plain HTTP: %q, want HttpOnly, SameSite=Strict, not Secure", cookie)
		}
	}
	page := func(cookie string) response { return getWith(t, f, "/jobs", withCookie(cookie)) }
	tokenOf := func(cookie string) string {
		t.Helper()
		r := page(cookie)
		m := csrfField.FindStringSubmatch(r.body)
		if r.status != http.StatusOK || m == nil || !strings.Contains(r.body, `id="signout"`) {
			t.Fatalf("a signed-in page: HTTP %d, with no CSRF token or sign-out:\n%s", r.status, r.body)
		}
		return m[1]
	}
	ta, tb := tokenOf(a), tokenOf(b)
	if ta == tb {
		t.Error("two sessions share their CSRF token")
	}
	// A's token is no good in B's session.
	if r := post(t, f, "/logout", url.Values{"csrf": {ta}}, withCookie(b)); r.status != http.StatusForbidden {
		t.Errorf("B signing out with A's CSRF token: HTTP %d, want 403", r.status)
	}
	r := post(t, f, "/logout", url.Values{"csrf": {ta}}, withCookie(a))
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/login" || !strings.Contains(r.header.Get("Set-Cookie"), "Max-Age=0") {
		t.Fatalf("signing out: HTTP %d to %q, Set-Cookie %q", r.status, r.header.Get("Location"), r.header.Get("Set-Cookie"))
	}
	if r := page(a); r.status != http.StatusSeeOther || r.header.Get("Location") != "/login" {
		t.Errorf("the signed-out cookie: HTTP %d, want 303 to /login", r.status)
	}
	if r := page(b); r.status != http.StatusOK {
		t.Errorf("the other browser after a sign-out: HTTP %d, want 200", r.status)
	}
	// The session ends after 12 hours.
	clk.add(12*time.Hour + time.Second)
	if r := page(b); r.status != http.StatusSeeOther {
		t.Errorf("a session 12 hours old: HTTP %d, want 303 to /login", r.status)
	}

	logins, signouts := logs.records(t, "console login"), logs.records(t, "console sign-out")
	short := regexp.MustCompile(`^token [0-9a-f]{8}$`)
	if len(logins) != 2 || len(signouts) != 1 {
		t.Fatalf("%d login and %d sign-out lines, want 2 and 1", len(logins), len(signouts))
	}
	for _, rec := range append(logins, signouts...) {
		if who, _ := rec["who"].(string); !short.MatchString(who) || rec["addr"] != "127.0.0.1" {
			t.Errorf("a session's log line: %v, want who \"token <short id>\" and addr", rec)
		}
	}
	if logins[0]["who"] != signouts[0]["who"] || logins[0]["who"] == logins[1]["who"] {
		t.Errorf("the sign-out names %v, the logins %v and %v: want the first", signouts[0]["who"], logins[0]["who"], logins[1]["who"])
	}
	for _, rec := range append(logins, signouts...) {
		for _, v := range rec {
			if s, ok := v.(string); ok && (strings.Contains(a, s) && len(s) > 16 || strings.Contains(s, "the-token")) {
				t.Errorf("a log line shows a cookie or the token: %v", rec)
			}
		}
	}
}

// Wrong credentials from one address: five are answered, then the
// address waits, the right credentials too, and each failure is logged.
func TestWrongCredentialsAreThrottled(t *testing.T) {
	var logs logBuffer
	clk := &clock{t: time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)}
	f := newFixture(t, 1, func(c *console.Config) {
		c.Token, c.User, c.Password, c.Now = "the-token", "op", "pw", clk.now
		logTo(&logs)(c)
	})
	for i := range 5 {
		if r := post(t, f, "/login", url.Values{"token": {"guess-" + strconv.Itoa(i)}}, nil); r.status != http.StatusUnauthorized {
			t.Fatalf("wrong token %d: HTTP %d, want 401", i, r.status)
		}
	}
	for name, attempt := range map[string]func() response{
		"the login page with the right token": func() response { return post(t, f, "/login", url.Values{"token": {"the-token"}}, nil) },
		"basic auth":                          func() response { return getWith(t, f, "/jobs", func(r *http.Request) { r.SetBasicAuth("op", "pw") }) },
		"a bearer token": func() response {
			return getWith(t, f, "/jobs", func(r *http.Request) { r.Header.Set("Authorization", "Bearer the-token") })
		},
	} {
		r := attempt()
		if wait, _ := strconv.Atoi(r.header.Get("Retry-After")); r.status != http.StatusTooManyRequests || wait < 1 || wait > 5 {
			t.Errorf("%s after 5 wrong tokens: HTTP %d, Retry-After %q; want 429 within 5 s", name, r.status, r.header.Get("Retry-After"))
		}
	}
	failed := logs.records(t, "console login failed")
	if len(failed) != 5 {
		t.Errorf("%d failed logins logged, want 5", len(failed))
	}
	for _, rec := range failed {
		if rec["addr"] != "127.0.0.1" || rec["method"] != "token" {
			t.Errorf("a failed login's line: %v", rec)
		}
	}
	// One more try every 5 s.
	clk.add(5 * time.Second)
	if r := getWith(t, f, "/jobs", func(r *http.Request) { r.SetBasicAuth("op", "wrong") }); r.status != http.StatusSeeOther {
		t.Errorf("a wrong password 5 s on: HTTP %d, want 303 to the login page", r.status)
	}
	if rec := logs.records(t, "console login failed"); len(rec) != 6 || rec[5]["method"] != "basic" || rec[5]["user"] != "op" {
		t.Errorf("the wrong password's line: %v", rec[len(rec)-1])
	}
	if r := getWith(t, f, "/jobs", func(r *http.Request) { r.SetBasicAuth("op", "pw") }); r.status != http.StatusTooManyRequests {
		t.Errorf("right after it: HTTP %d, want 429", r.status)
	}
	clk.add(5 * time.Second)
	if r := getWith(t, f, "/jobs", func(r *http.Request) { r.SetBasicAuth("op", "pw") }); r.status != http.StatusOK {
		t.Errorf("the right password 5 s on: HTTP %d, want 200", r.status)
	}
}

// With a certificate the console serves HTTPS, and its session cookie is
// Secure.
func TestTLSServesHTTPSWithSecureCookies(t *testing.T) {
	set, err := devcert.Generate(nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, set.ServerCert, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, set.ServerKey, 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, 1, nil)
	if _, err := console.New(console.Config{Conn: f.conn, TLSCert: cert, TLSKey: filepath.Join(dir, "missing.pem")}); err == nil {
		t.Error("New with a missing key: no error")
	}
	s, err := console.New(console.Config{Conn: f.conn, Token: "the-token", TLSCert: cert, TLSKey: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if s.Scheme() != "https" {
		t.Errorf("Scheme %q, want https", s.Scheme())
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(t.Context(), l) }()
	t.Cleanup(func() {
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(set.CA)
	https := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	base := "https://" + l.Addr().String()
	resp, err := https.PostForm(base+"/login", url.Values{"token": {"the-token"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if c := resp.Header.Get("Set-Cookie"); resp.StatusCode != http.StatusSeeOther || !strings.Contains(c, "; Secure") || !strings.Contains(c, "HttpOnly") {
		t.Errorf("signing in over HTTPS: HTTP %d, Set-Cookie %q; want a Secure cookie", resp.StatusCode, c)
	}
	// Plain HTTP to the TLS port is not served.
	if resp, err := http.Get("http://" + l.Addr().String() + "/login"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("plain HTTP to the TLS listener served the login page")
		}
	}
}

// A console with credentials told to serve plain HTTP beyond loopback
// (--insecure-http) serves it, and says loudly that it is insecure.
func TestInsecureHTTPIsLoggedLoudly(t *testing.T) {
	var logs logBuffer
	f := newFixture(t, 1, nil)
	c := console.Config{Conn: f.conn, Token: "the-token", InsecureHTTP: true}
	logTo(&logs)(&c)
	if err := console.CheckListen("0.0.0.0:0", c); err != nil {
		t.Fatal(err)
	}
	s, err := console.New(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	l, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, l) }()
	port := l.Addr().(*net.TCPAddr).Port
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(port) + "/login")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the login page over plain HTTP: HTTP %d", resp.StatusCode)
	}
	var warned bool
	logs.mu.Lock()
	for line := range strings.Lines(logs.buf.String()) {
		warned = warned || strings.Contains(line, `"level":"WARN"`) && strings.Contains(line, "INSECURE") && strings.Contains(line, "--tls-cert")
	}
	logs.mu.Unlock()
	if !warned {
		t.Errorf("no warning logged:\n%s", logs.buf.String())
	}
}

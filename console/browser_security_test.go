package console_test

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/acemq-go/acemq/admin"
	"github.com/acemq-go/acemq/console"
	"github.com/acemq-go/acemq/internal/testing/browsertest"
)

// seen is a request that reached the console's server, and its answer.
type seen struct {
	method, path, site, mode string
	status                   int
}

// recorder records every request of a console's server.
type recorder struct {
	mu   sync.Mutex
	list []seen
	next http.Handler
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	rec.next.ServeHTTP(sw, r)
	rec.mu.Lock()
	rec.list = append(rec.list, seen{r.Method, r.URL.Path, r.Header.Get("Sec-Fetch-Site"), r.Header.Get("Sec-Fetch-Mode"), sw.status})
	rec.mu.Unlock()
}

func (rec *recorder) requests() []seen {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]seen(nil), rec.list...)
}

// browserConsole serves a console of f's broker with c's credentials, its
// requests recorded.
func browserConsole(t *testing.T, f fixture, c console.Config) (*httptest.Server, *recorder) {
	t.Helper()
	endpoint, err := admin.EndpointFor("amqp://guest:guest@127.0.0.1:1/", "http://guest:guest@"+f.mgmt)
	if err != nil {
		t.Fatal(err)
	}
	c.Conn, c.Endpoint = f.conn, endpoint
	s, err := console.New(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	rec := &recorder{next: s}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	return srv, rec
}

// screenshot takes a PNG of the page for docs/console.md, written to
// $ACEMQ_CONSOLE_SCREENSHOTS when that is set.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	b, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if _, err := png.Decode(bytes.NewReader(b)); err != nil {
		t.Fatalf("screenshot %s is not a PNG: %v", name, err)
	}
	if dir := os.Getenv(screenshotsEnv); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, name+".png"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A page of another site (and of another port of the same host, which is
// the same site) makes a headless Chromium request the console's queue
// page as an <img> and a fetch, post a purge, and follow links. Only the
// link to the overview is served: the rest is answered 403 by the
// console's first layer, and the queue keeps its messages.
func TestBrowserCrossSiteRequestsAreRefused(t *testing.T) {
	ctx := browsertest.Browser(t, 1024, 640)
	f := newFixture(t, 3, nil)
	target, rec := browserConsole(t, f, console.Config{Logger: slog.New(slog.DiscardHandler)})
	queuePage := target.URL + "/queue?name=" + f.dlq

	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>elsewhere</title>
<img src="%[1]s" alt="">
<script>fetch(%[1]q, {mode: "no-cors", credentials: "include"}).catch(function () {});</script>
<form method="post" action="%[2]s/run"><input name="op" value="purge all"><input name="queue" value="%[3]s"><input name="count" value="3"><button id="purge">win a prize</button></form>
<a id="queue" href="%[1]s">a queue</a> <a id="overview" href="%[2]s/">the console</a>`, queuePage, target.URL, f.dlq)
	}))
	t.Cleanup(attacker.Close)
	port := attacker.Listener.Addr().(interface{ String() string }).String()
	port = port[strings.LastIndex(port, ":"):]

	// localhost is another site than 127.0.0.1; another port of 127.0.0.1
	// is the same site, another origin.
	for _, c := range []struct{ page, site string }{
		{"http://localhost" + port + "/", "cross-site"},
		{"http://127.0.0.1" + port + "/", "same-site"},
	} {
		before := len(rec.requests())
		browse{t, ctx}.step("the page of "+c.page, chromedp.Navigate(c.page), chromedp.WaitVisible(chromedp.CSS("#purge")))
		// The <img> and the fetch: both reach the server and are refused.
		deadline := time.Now().Add(10 * time.Second)
		for {
			var subresources []seen
			for _, s := range rec.requests()[before:] {
				if s.path == "/queue" && s.mode != "navigate" {
					subresources = append(subresources, s)
				}
			}
			if len(subresources) >= 2 {
				for _, s := range subresources {
					if s.status != http.StatusForbidden || s.site != c.site {
						t.Errorf("from %s: %+v, want 403 to a %s request", c.page, s, c.site)
					}
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("from %s: the <img> and the fetch did not reach the console in 10 s: %+v", c.page, rec.requests()[before:])
			}
			time.Sleep(10 * time.Millisecond) // polling the recorder, bounded by the deadline
		}

		browse{t, ctx}.step("the cross-site purge", chromedp.Click(chromedp.CSS("#purge")), chromedp.WaitVisible(chromedp.CSS("#error")))
		if got, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#error"))); !strings.Contains(got, "came from another site") {
			t.Errorf("from %s, the purge's answer says %q", c.page, got)
		}
		browse{t, ctx}.step("the link to a queue page", chromedp.Navigate(c.page), chromedp.WaitVisible(chromedp.CSS("#queue")),
			chromedp.Click(chromedp.CSS("#queue")), chromedp.WaitVisible(chromedp.CSS("#error")))
		if got, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#error"))); !strings.Contains(got, "This link came from another site") {
			t.Errorf("from %s, the link to a queue page says %q", c.page, got)
		}
		if c.site == "cross-site" {
			screenshot(t, ctx, "cross-site")
		}
		browse{t, ctx}.step("the link to the overview", chromedp.Navigate(c.page), chromedp.WaitVisible(chromedp.CSS("#overview")),
			chromedp.Click(chromedp.CSS("#overview")), chromedp.WaitVisible(chromedp.CSS("main h1")))
		if got, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("main"))); strings.Contains(got, "another site") {
			t.Errorf("from %s, the link to the overview was refused: %q", c.page, got)
		}

		// Of the requests from the other page, only the link to the overview
		// was answered with anything but 403 (the console's own pages then
		// load their styles and script, same-origin).
		overview := false
		for _, s := range rec.requests()[before:] {
			switch {
			case s.site == "same-origin":
			case s.method == http.MethodGet && s.path == "/" && s.mode == "navigate":
				overview = true
			case s.status != http.StatusForbidden:
				t.Errorf("from %s: %+v was answered %d, want 403", c.page, s, s.status)
			}
		}
		if !overview {
			t.Errorf("from %s: the link to the overview never reached the console", c.page)
		}
	}
	if n := depth(t, f, f.dlq); n != 3 {
		t.Errorf("%d messages in %s after the other sites' requests, want 3", n, f.dlq)
	}
}

// A browser signs in with the token (the login page shows no CSRF token),
// sees the job history with a sign-out control, signs out, and is then
// sent to the login page again; the audit log has the failed sign-in, the
// sign-in and the sign-out.
func TestBrowserSignInAndSignOut(t *testing.T) {
	ctx := browsertest.Browser(t, 1024, 640)
	var logs logBuffer
	f := newFixture(t, 1, nil)
	srv, _ := browserConsole(t, f, console.Config{Token: "the-token", Logger: slog.New(slog.NewJSONHandler(&logs, nil))})

	// A script parks the messages with the bearer token: the history then
	// has a job.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/run", strings.NewReader(url.Values{"op": {"park all"}, "queue": {f.dlq}, "count": {"1"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer the-token")
	r := do(t, req)
	if r.status != http.StatusSeeOther {
		t.Fatalf("a park by a script: HTTP %d\n%s", r.status, r.body)
	}
	jobJSON := srv.URL + strings.Replace(r.header.Get("Location"), "/job?", "/job.json?", 1)
	for deadline := time.Now().Add(10 * time.Second); ; {
		req, _ := http.NewRequest(http.MethodGet, jobJSON, nil)
		req.Header.Set("Authorization", "Bearer the-token")
		if strings.Contains(do(t, req).body, `"done":true`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the park did not end in 10 s")
		}
		time.Sleep(10 * time.Millisecond) // polling the job, bounded by the deadline
	}

	browse{t, ctx}.step("the job history, signed out", chromedp.Navigate(srv.URL+"/jobs"), chromedp.WaitVisible(chromedp.CSS("#login")))
	screenshot(t, ctx, "login")
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('input[name=csrf]').length`)); n != 0 {
		t.Errorf("the login page has %d CSRF fields, want none", n)
	}
	browse{t, ctx}.step("a wrong token", chromedp.SendKeys(chromedp.CSS("input[name=token]"), "guess"),
		chromedp.Click(chromedp.CSS("#login button")), chromedp.WaitVisible(chromedp.CSS("#error")))
	browse{t, ctx}.step("the token", chromedp.SendKeys(chromedp.CSS("input[name=token]"), "the-token"),
		chromedp.Click(chromedp.CSS("#login button")), chromedp.WaitVisible(chromedp.CSS("#signout")))
	browse{t, ctx}.step("the job history, signed in", chromedp.Navigate(srv.URL+"/jobs"), chromedp.WaitVisible(chromedp.CSS("#history td.outcome-ok")))
	if got, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#history tbody"))); !strings.Contains(got, "token") || !strings.Contains(got, "park") || !strings.Contains(got, f.dlq) {
		t.Errorf("the history shows %q, want the script's park of %s", got, f.dlq)
	}
	screenshot(t, ctx, "jobs")
	cookies, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.cookie`))
	if strings.Contains(cookies, "acemq_console") {
		t.Errorf("a script reads the session cookie: %q", cookies)
	}
	browse{t, ctx}.step("sign out", chromedp.Click(chromedp.CSS("#signout")), chromedp.WaitVisible(chromedp.CSS("#login")))
	browse{t, ctx}.step("the job history, signed out again", chromedp.Navigate(srv.URL+"/jobs"), chromedp.WaitVisible(chromedp.CSS("#login")))
	if loc, _ := chromedp.Run(ctx, chromedp.Location()); !strings.HasSuffix(loc, "/login") {
		t.Errorf("after signing out, /jobs is at %s, want /login", loc)
	}
	failed, in, out := logs.records(t, "console login failed"), logs.records(t, "console login"), logs.records(t, "console sign-out")
	if len(failed) != 1 || len(in) != 1 || len(out) != 1 || in[0]["who"] != out[0]["who"] {
		t.Errorf("the log has %d failed sign-ins, %v, %v; want one each, the same session", len(failed), in, out)
	}
}

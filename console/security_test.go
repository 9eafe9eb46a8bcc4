package console_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq-go/acemq/console"
)

// logBuffer takes a console's log, JSON lines, from the request handlers
// and the jobs at once.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// records are the log's lines whose msg is msg, decoded.
func (b *logBuffer) records(t *testing.T, msg string) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for line := range strings.Lines(b.buf.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("a log line that is not JSON: %q: %v", line, err)
		}
		if rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// logTo sends a console's log to b.
func logTo(b *logBuffer) func(*console.Config) {
	return func(c *console.Config) { c.Logger = slog.New(slog.NewJSONHandler(b, nil)) }
}

func withHeaders(h map[string]string) func(*http.Request) {
	return func(r *http.Request) {
		for k, v := range h {
			r.Header.Set(k, v)
		}
	}
}

// The headers a browser sends for what a page of another site can make it
// request of the console: an <img> or a script's fetch of a queue page, a
// frame, a link. Only a link to the overview (or the login page it leads
// to) is served; the rest is refused before any handler, and logged.
func TestCrossSiteGETsAreRefused(t *testing.T) {
	var logs logBuffer
	f := newFixture(t, 3, logTo(&logs))
	queuePage := "/queue?name=" + f.dlq
	img := map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"}
	for _, c := range []struct {
		name    string
		path    string
		headers map[string]string
		refused bool
	}{
		{"an <img> of another site", queuePage, img, true},
		{"an <img> of another port (the same site)", queuePage, map[string]string{"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"}, true},
		{"an <img> of the job history", "/jobs", img, true},
		{"an <img> of the overview", "/", img, true},
		{"a fetch of another origin", queuePage, map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty", "Origin": "https://evil.example"}, true},
		{"an Origin alone (an older browser's fetch)", queuePage, map[string]string{"Origin": "https://evil.example"}, true},
		{"an opaque Origin", queuePage, map[string]string{"Origin": "null"}, true},
		{"a frame", "/", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe"}, true},
		{"a link to a queue page", queuePage, map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}, true},
		{"a link to a job", "/job?id=x", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}, true},
		{"a link to the overview", "/", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}, false},
		{"a link to the login page", "/login", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}, false},
		{"the console's own page", queuePage, map[string]string{"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}, false},
		{"a typed address", queuePage, map[string]string{"Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}, false},
		{"a script (no browser headers)", queuePage, nil, false},
	} {
		req, err := http.NewRequest(http.MethodGet, f.srv.URL+c.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		withHeaders(c.headers)(req)
		before := len(logs.records(t, "console request refused"))
		r := do(t, req)
		refusals := logs.records(t, "console request refused")
		if got := r.status == http.StatusForbidden && strings.Contains(r.body, "another site"); got != c.refused {
			t.Errorf("%s: GET %s: HTTP %d, refused %v, want refused %v:\n%s", c.name, c.path, r.status, got, c.refused, r.body)
		}
		if logged := len(refusals) > before; logged != c.refused {
			t.Errorf("%s: the refusal logged %v, want %v", c.name, logged, c.refused)
		} else if logged {
			if rec := refusals[len(refusals)-1]; rec["path"] != strings.SplitN(c.path, "?", 2)[0] || rec["level"] != "WARN" {
				t.Errorf("%s: the refusal's log line: %v", c.name, rec)
			}
		}
		if c.refused && strings.Contains(r.body, `name="csrf"`) {
			t.Errorf("%s: the refusal renders a CSRF token", c.name)
		}
	}
	if n := depth(t, f, f.dlq); n != 3 {
		t.Errorf("%d messages in %s, want 3", n, f.dlq)
	}
}

// Every body is bounded: a form at 1 MiB, an upload at its maximum, each
// refused beyond with 413 whether or not its length is announced.
func TestRequestBodiesAreBounded(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // the uploads' temporary files
	f := newFixture(t, 2, func(c *console.Config) { c.MaxImport = 1 << 20 })
	token := csrf(t, f)

	big := "csrf=" + token + "&op=purge+all&queue=" + f.dlq + "&pad=" + strings.Repeat("a", 2<<20)
	for _, announced := range []bool{true, false} {
		var body io.Reader = strings.NewReader(big)
		if !announced {
			body = io.MultiReader(body) // no length: sent chunked
		}
		req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/confirm", body)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if r := do(t, req); r.status != http.StatusRequestEntityTooLarge || !strings.Contains(r.body, "at most 1 MiB") {
			t.Errorf("a 2 MiB form (length announced %v): HTTP %d, want 413:\n%s", announced, r.status, r.body)
		}
	}

	upload := func(path string, size int, announced bool) response {
		t.Helper()
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		_ = mw.WriteField("csrf", token)
		_ = mw.WriteField("queue", f.dlq)
		fw, _ := mw.CreateFormFile("file", "big.jsonl")
		_, _ = fw.Write(bytes.Repeat([]byte("x"), size))
		_ = mw.Close()
		var body io.Reader = &b
		if !announced {
			body = io.MultiReader(body)
		}
		req, _ := http.NewRequest(http.MethodPost, f.srv.URL+path, body)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		return do(t, req)
	}
	for _, announced := range []bool{true, false} {
		if r := upload("/import", 3<<20, announced); r.status != http.StatusRequestEntityTooLarge || !strings.Contains(r.body, "larger than the 1 MiB") {
			t.Errorf("a 3 MiB import over a 1 MiB maximum (length announced %v): HTTP %d, want 413:\n%s", announced, r.status, r.body)
		}
		if r := upload("/drift", 5<<20, announced); r.status != http.StatusRequestEntityTooLarge || !strings.Contains(r.body, "larger than the 4 MiB") {
			t.Errorf("a 5 MiB topology file (length announced %v): HTTP %d, want 413", announced, r.status)
		}
	}
	if r := upload("/confirm", 10, true); r.status != http.StatusUnsupportedMediaType {
		t.Errorf("an upload to /confirm: HTTP %d, want 415", r.status)
	}
	// An import within its maximum reaches its confirmation (this one is
	// not an export file).
	if r := upload("/import", 512<<10, true); r.status != http.StatusBadRequest || !strings.Contains(r.body, "Cannot import that file") {
		t.Errorf("a 512 KiB import: HTTP %d:\n%s", r.status, r.body)
	}
	// No refused or failed upload leaves its temporary file.
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the uploads left %d temporary files, want none: %v", len(left), left)
	}
	if n := depth(t, f, f.dlq); n != 2 {
		t.Errorf("%d messages in %s, want 2", n, f.dlq)
	}
}

// An import upload is written to a temporary file as it arrives: half of
// it is on disk while the other half has not been sent.
func TestImportUploadIsStreamedToAFile(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	f := newFixture(t, 1, nil)
	token := csrf(t, f)
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/import", pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	done := make(chan response, 1)
	go func() { done <- do(t, req) }()

	half := bytes.Repeat([]byte("y"), 4<<20)
	_ = mw.WriteField("csrf", token)
	_ = mw.WriteField("queue", f.dlq)
	fw, _ := mw.CreateFormFile("file", "stream.jsonl")
	if _, err := fw.Write(half); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for onDisk := int64(0); onDisk < int64(len(half))/2; {
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes of the upload on disk after 10 s, want half of the %d sent", onDisk, len(half))
		}
		onDisk = 0
		entries, _ := os.ReadDir(tmp)
		for _, e := range entries {
			if info, err := e.Info(); err == nil && strings.HasPrefix(e.Name(), "acemq-console-upload-") {
				onDisk += info.Size()
			}
		}
		time.Sleep(5 * time.Millisecond) // polling the directory, bounded by the deadline
	}
	_, _ = fw.Write(half)
	_ = mw.Close()
	_ = pw.Close()
	if r := <-done; r.status != http.StatusBadRequest || !strings.Contains(r.body, "Cannot import that file") {
		t.Errorf("the streamed upload: HTTP %d:\n%s", r.status, r.body)
	}
}

// An upload without its CSRF token is refused, and its file removed.
func TestUploadWithoutTheCSRFTokenIsRemoved(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	f := newFixture(t, 1, nil)
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	fw, _ := mw.CreateFormFile("file", "x.jsonl")
	_, _ = fw.Write([]byte("{}\n"))
	_ = mw.WriteField("csrf", "wrong")
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/import", &b)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if r := do(t, req); r.status != http.StatusForbidden || !strings.Contains(r.body, "CSRF token") {
		t.Errorf("an upload with a wrong token: HTTP %d:\n%s", r.status, r.body)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the refused upload left %v", left)
	}
}

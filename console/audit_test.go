package console_test

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/console"
	"github.com/acemq-go/acemq/contract"
)

// Each action writes its audit line as it starts and as it ends: who (the
// basic-auth user), from where, what, which queue, how many were
// confirmed, then moved, left and doubtful, and the outcome. The job
// history lists them, newest first.
func TestAuditLogNamesEachAction(t *testing.T) {
	var logs logBuffer
	f := newFixture(t, 6, func(c *console.Config) {
		c.User, c.Password = "op", "pw"
		logTo(&logs)(c)
	})
	as := func(r *http.Request) { r.SetBasicAuth("op", "pw") }
	page := getWith(t, f, "/queue?name="+f.dlq, as)
	m := csrfField.FindStringSubmatch(page.body)
	if m == nil {
		t.Fatalf("no CSRF token on the queue page (HTTP %d)", page.status)
	}
	token := m[1]
	run := func(form url.Values, count int) string {
		t.Helper()
		form.Set("csrf", token)
		form.Set("count", fmt.Sprint(count))
		r := post(t, f, "/run", form, as)
		if r.status != http.StatusSeeOther {
			t.Fatalf("run %v: HTTP %d\n%s", form, r.status, r.body)
		}
		id := strings.TrimPrefix(r.header.Get("Location"), "/job?id=")
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		for !strings.Contains(getWith(t, f, "/job.json?id="+id, as).body, `"done":true`) {
			select {
			case <-ctx.Done():
				t.Fatalf("job %s never ended", id)
			case <-time.After(10 * time.Millisecond):
			}
		}
		return id
	}
	parked := contract.ParkedQueue(f.source)
	export := run(url.Values{"op": {"export all"}, "queue": {f.dlq}}, 6)
	download := getWith(t, f, "/job/download?id="+export, as)
	replay := run(url.Values{"op": {"replay selected"}, "queue": {f.dlq}, "id": {"id-00000", "id-00001"}}, 2)
	park := run(url.Values{"op": {"park all"}, "queue": {f.dlq}}, 4)
	confirmation := post(t, f, "/confirm", url.Values{"csrf": {token}, "op": {"purge all"}, "queue": {parked}}, as)
	purge := run(url.Values{"op": {"purge all"}, "queue": {parked}, "typed": {parked}, "token": {purgeToken(t, confirmation.body)}}, 4)

	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("csrf", token)
	_ = mw.WriteField("queue", f.dlq)
	fw, _ := mw.CreateFormFile("file", "saved.jsonl")
	_, _ = fw.Write([]byte(download.body))
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/import", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	as(req)
	upload := regexp.MustCompile(`name="upload" value="([0-9a-f]+)"`).FindStringSubmatch(do(t, req).body)
	if upload == nil {
		t.Fatal("no upload id on the import's confirmation")
	}
	imp := run(url.Values{"op": {"import all"}, "queue": {f.dlq}, "upload": {upload[1]}}, 6)

	type want struct {
		job, action, queue             string
		confirmed, moved, left, doubtf float64
	}
	// A job's end line follows its being done by a moment: wait for the
	// import's, the last job's.
	lines := logs.records(t, "console action")
	for deadline := time.Now().Add(10 * time.Second); !hasEnd(lines, imp) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond) // polling the log, bounded by the deadline
		lines = logs.records(t, "console action")
	}
	for _, w := range []want{
		{export, "export", f.dlq, 6, 6, 0, 0},
		{replay, "replay", f.dlq, 2, 2, 0, 0},
		{park, "park", f.dlq, 4, 4, 0, 0},
		{purge, "purge", parked, 4, 4, 0, 0},
		{imp, "import", f.dlq, 6, 6, 0, 0},
	} {
		var started, ended map[string]any
		for _, rec := range lines {
			if rec["job"] == w.job && rec["outcome"] == "started" {
				started = rec
			} else if rec["job"] == w.job {
				ended = rec
			}
		}
		if started == nil || ended == nil {
			t.Errorf("%s: no audit line as it started (%v) or as it ended (%v)", w.action, started, ended)
			continue
		}
		t.Logf("%s: %v", w.action, ended)
		for _, rec := range []map[string]any{started, ended} {
			if rec["who"] != "op" || rec["addr"] != "127.0.0.1" || rec["action"] != w.action || rec["queue"] != w.queue || rec["confirmed"] != w.confirmed || rec["level"] != "INFO" {
				t.Errorf("%s: the audit line %v, want who op from 127.0.0.1, %s of %s, %v confirmed", w.action, rec, w.action, w.queue, w.confirmed)
			}
		}
		if ended["outcome"] != "ok" || ended["moved"] != w.moved || ended["left"] != w.left || ended["doubtful"] != w.doubtf || ended["summary"] == "" {
			t.Errorf("%s: its end %v, want ok, %v moved, %v left, %v doubtful", w.action, ended, w.moved, w.left, w.doubtf)
		}
	}

	// The job history: newest first, each with who, what, which queue, how
	// it went, and a link to its page.
	h := getWith(t, f, "/jobs", as)
	rows := regexp.MustCompile(`<tr data-job="([0-9a-f]+)">`).FindAllStringSubmatch(h.body, -1)
	var order []string
	for _, r := range rows {
		order = append(order, r[1])
	}
	if fmt.Sprint(order) != fmt.Sprint([]string{imp, purge, park, replay, export}) {
		t.Errorf("the history lists %v, want the import, purge, park, replay and export, newest first", order)
	}
	for _, want := range []string{`href="/job?id=` + imp + `"`, "<td>op <span class=\"muted\">127.0.0.1</span></td>", "<td>purge</td>", "<td>" + parked + "</td>", `class="outcome-ok"`} {
		if !strings.Contains(h.body, want) {
			t.Errorf("the history lacks %q:\n%s", want, h.body)
		}
	}
}

// A console without credentials on loopback names its caller "local".
func TestAuditOfALocalConsole(t *testing.T) {
	var logs logBuffer
	f := newFixture(t, 2, logTo(&logs))
	awaitJob(t, f, runAction(t, f, url.Values{"csrf": {csrf(t, f)}, "op": {"park all"}, "queue": {f.dlq}}, 2))
	lines := logs.records(t, "console action")
	if len(lines) != 2 || lines[0]["who"] != "local" || lines[1]["who"] != "local" || lines[1]["moved"] != float64(2) {
		t.Errorf("the park's audit lines: %v", lines)
	}
	if h := get(t, f, "/jobs"); !strings.Contains(h.body, "<td>local ") {
		t.Errorf("the history does not name the caller local:\n%s", h.body)
	}
}

// hasEnd says whether lines have the end line of job.
func hasEnd(lines []map[string]any, job string) bool {
	for _, rec := range lines {
		if rec["job"] == job && rec["outcome"] != "started" {
			return true
		}
	}
	return false
}

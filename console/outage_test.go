//go:build chaos

package console_test

// These tests stop, pause and alarm the broker node of the environment, so
// they are kept out of `go test ./...` by the chaos tag, as the chaos
// harness's are: `make console-outage` runs them on a node of their own.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acemq-go/acemq/console"
)

// pageTimeout is the consoles' bound in these tests; a page must answer
// within it and a margin (the client's timeout below).
const pageTimeout = 3 * time.Second

// patient waits for a page long after the console's bound: a page that
// does not answer by then fails the test.
var patient = &http.Client{Timeout: pageTimeout + 20*time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// ctl runs rabbitmqctl on the environment's node (scripts/rabbitmq.sh ctl).
func ctl(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{"scripts/rabbitmq.sh", "ctl"}, args...)...)
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("rabbitmqctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// timedGet gets path, and logs how long it took (a figure, not asserted).
func timedGet(t *testing.T, base, path string) (int, string) {
	t.Helper()
	start := time.Now()
	resp, err := patient.Get(base + path)
	if err != nil {
		t.Fatalf("GET %s did not answer: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	t.Logf("GET %s: HTTP %d in %s", path, resp.StatusCode, time.Since(start).Round(time.Millisecond))
	return resp.StatusCode, string(b)
}

// until polls cond every 200ms until it holds, failing after within.
func until(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

var errorText = regexp.MustCompile(`<p class="error" id="error">([^<]*)</p>`)

// pagesSayWhatIsWrong gets every page that asks the broker, and wants each
// to answer (before the client's timeout) with an error status and a
// message holding want.
func pagesSayWhatIsWrong(t *testing.T, o onRabbitMQ, want ...string) {
	t.Helper()
	for _, path := range []string{"/", "/queue?name=" + url.QueryEscape(o.dlq), "/edit?queue=" + url.QueryEscape(o.dlq) + "&id=id-00001"} {
		status, body := timedGet(t, o.url, path)
		if status < 500 {
			t.Errorf("GET %s: HTTP %d, want a 50x saying what is wrong", path, status)
		}
		if m := errorText.FindStringSubmatch(body); m != nil {
			t.Logf("GET %s says: %s", path, m[1])
		}
		found := false
		for _, w := range want {
			found = found || strings.Contains(body, w)
		}
		if !found {
			t.Errorf("GET %s says none of %q:\n%s", path, want, body)
		}
	}
}

func backToNormal(t *testing.T, o onRabbitMQ) {
	t.Helper()
	until(t, 2*time.Minute, "the queue page answering again", func() bool {
		status, _ := timedGet(t, o.url, "/queue?name="+url.QueryEscape(o.dlq))
		return status == http.StatusOK
	})
}

// A paused node (SIGSTOP): the connection stays open, nothing answers.
func TestConsolePausedBroker(t *testing.T) {
	o := consoleOnRabbitMQ(t, 5, func(c *console.Config) { c.PageTimeout = pageTimeout })
	var pid int
	if _, err := fmt.Sscanf(strings.Trim(ctl(t, "eval", "os:getpid()."), `"`), "%d", &pid); err != nil || pid <= 1 {
		t.Fatalf("the node's pid: %v", err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(resume)
	pagesSayWhatIsWrong(t, o, "did not answer")
	resume()
	backToNormal(t, o)
}

// A stopped node (rabbitmqctl stop_app): the connection is lost, and
// reopening it is refused.
func TestConsoleStoppedBroker(t *testing.T) {
	o := consoleOnRabbitMQ(t, 5, func(c *console.Config) { c.PageTimeout = pageTimeout })
	ctl(t, "stop_app")
	started := false
	start := func() {
		if !started {
			started = true
			ctl(t, "start_app")
		}
	}
	t.Cleanup(start)
	pagesSayWhatIsWrong(t, o, "The connection to the broker was lost", "The management API did not answer", "not connected")
	start()
	backToNormal(t, o)
}

// A replay during a memory alarm: its page says it waits on the alarm,
// and once the alarm clears it moves every message.
func TestConsoleJobBlockedByAnAlarm(t *testing.T) {
	const n = 20
	o := consoleOnRabbitMQ(t, n, func(c *console.Config) { c.PageTimeout = pageTimeout })
	status, page := timedGet(t, o.url, "/queue?name="+url.QueryEscape(o.dlq))
	m := csrfField.FindStringSubmatch(page)
	if status != http.StatusOK || m == nil {
		t.Fatalf("the queue page: HTTP %d:\n%s", status, page)
	}
	previous := ctl(t, "eval", "vm_memory_monitor:get_vm_memory_high_watermark().")
	ctl(t, "set_vm_memory_high_watermark", "0.0000001")
	cleared := false
	clear := func() {
		if !cleared {
			cleared = true
			ctl(t, "set_vm_memory_high_watermark", previous)
		}
	}
	t.Cleanup(clear)

	form := url.Values{"csrf": {m[1]}, "op": {"replay all"}, "queue": {o.dlq}, "count": {fmt.Sprint(n)}}
	resp, err := patient.PostForm(o.url+"/run", form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	job := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(job, "/job?id=") {
		t.Fatalf("starting the replay: HTTP %d, Location %q", resp.StatusCode, job)
	}
	state := func() (s struct {
		Done    bool
		Moved   int
		Blocked string
	}) {
		_, body := timedGet(t, o.url, strings.Replace(job, "/job?", "/job.json?", 1))
		if err := json.Unmarshal([]byte(body), &s); err != nil {
			t.Fatalf("the job's JSON: %v\n%s", err, body)
		}
		return s
	}
	until(t, time.Minute, "the job saying it is blocked", func() bool { return state().Blocked != "" })
	_, body := timedGet(t, o.url, job)
	if !strings.Contains(body, `id="blocked"`) || !strings.Contains(body, "the broker blocks this connection&#39;s publishes") || strings.Contains(body, `id="blocked" class="error" hidden`) {
		t.Errorf("the job's page does not say it is blocked:\n%s", body)
	}
	if s := state(); s.Done {
		t.Fatalf("the job ended during the alarm: %+v", s)
	}
	clear()
	until(t, 2*time.Minute, "the job ending", func() bool { return state().Done })
	if s := state(); s.Moved != n || s.Blocked != "" {
		t.Errorf("after the alarm the job moved %d of %d, blocked %q", s.Moved, n, s.Blocked)
	}
}

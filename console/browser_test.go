package console_test

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/admin"
	"github.com/acemq-go/acemq/console"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/internal/testing/browsertest"
	"github.com/acemq-go/acemq/internal/testing/conntest"
	"github.com/acemq-go/acemq/internal/testing/deliverytest"
	"github.com/acemq-go/acemq/transport"
)

// screenshotsEnv names a directory for the screenshots of docs/console.md.
const screenshotsEnv = "ACEMQ_CONSOLE_SCREENSHOTS"

// The console in a headless Chromium against RabbitMQ: the overview lists
// a queue with dead letters, its page counts the reasons, a replay of all
// 100 through the confirmation puts every one back in the source queue with
// its provenance and leaves none, and an action without the CSRF token is
// refused. It takes the screenshots of docs/console.md, on a vhost of its
// own.
func TestBrowserReplayOnRabbitMQ(t *testing.T) {
	url := brokertest.VhostURL(t) // the overview shows this test's queues alone
	ctx := browsertest.Browser(t, 1024, 640)

	conn := conntest.Connect(t, url, "console browser test")
	tr := conn.Transport()
	source := brokertest.UniqueName(t, "console")
	dlq, parked := contract.DeadLetterQueue(source), contract.ParkedQueue(source)
	rung := contract.RungQueue(source, 10*time.Second, contract.ContractRungs)
	for _, q := range []string{source, dlq, parked, rung} {
		if err := tr.DeclareQueue(t.Context(), transport.Queue{Name: q, Type: transport.Classic, Durable: true}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = tr.DeleteQueue(context.Background(), q) })
	}
	publish(t, conn, dlq, 100)

	endpoint, err := admin.EndpointFor(url, brokertest.ManagementURL())
	if err != nil {
		t.Fatal(err)
	}
	// A minute for a page's broker work, not the default 10 s: these
	// tests run beside others on a loaded machine, and a page that gives
	// up is not what they test (outage_test.go is).
	s, err := console.New(console.Config{Conn: conn, Endpoint: endpoint, PageTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	srv := httptest.NewServer(s) // on 127.0.0.1: no credentials needed
	t.Cleanup(srv.Close)

	b := browse{t, ctx}
	step, text := b.step, b.text
	shoot := func(name string) {
		t.Helper()
		b, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if _, err := png.Decode(bytes.NewReader(b)); err != nil || len(b) == 0 {
			t.Fatalf("screenshot %s is not a PNG: %v", name, err)
		}
		if dir := os.Getenv(screenshotsEnv); dir != "" {
			if err := os.WriteFile(filepath.Join(dir, name+".png"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}

	// The overview lists the source queue, with its dead letters.
	row := fmt.Sprintf(`tr[data-source=%q]`, source)
	// Auto-refresh off (the checkbox's stored choice): a reload between
	// finding the row's link and clicking it would lose the link, on a
	// machine slow enough to take 10 s over the steps below.
	step("the overview", chromedp.Navigate(srv.URL+"/"),
		void(chromedp.Evaluate[bool](`localStorage.setItem("acemq-console-auto-refresh:/", "off"), true`)),
		chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(row)))
	if got := text(row + " a.dlq"); got != "100" {
		t.Errorf("the overview shows %q dead letters of %s, want 100", got, source)
	}
	if got := text(row); !strings.Contains(got, "10s: 0") {
		t.Errorf("the overview's row of %s does not show its rung: %q", source, got)
	}
	shoot("overview")

	// The queue page counts the reasons.
	step("the queue page", chromedp.Click(chromedp.CSS(row+" a.dlq")), chromedp.WaitVisible(chromedp.CSS("#reasons")))
	// The chart counts what the snapshot has read so far (on a loaded
	// machine it may still be reading): reload until it has read the queue.
	for deadline := time.Now().Add(time.Minute); strings.HasPrefix(text("#snapshot"), "Reading") && time.Now().Before(deadline); {
		step("the queue page, reloaded", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#reasons")))
	}
	if got := text("#reasons"); !strings.Contains(got, "exhausted") || !strings.Contains(got, "100") {
		t.Errorf("the reason chart says %q, want 100 exhausted", got)
	}
	reasons := text("#reason-table")
	for _, want := range []string{"50\texhausted\texhausted <n> attempts: payment declined", "50\texhausted\texhausted <n> attempts: timeout calling stock"} {
		if !strings.Contains(reasons, want) {
			t.Errorf("the reason counts lack %q:\n%s", want, reasons)
		}
	}
	shoot("queue")

	// Replay all 100: the confirmation says so, the job follows it live.
	step("replay all", chromedp.Click(chromedp.CSS("#replay-matching")), chromedp.WaitVisible(chromedp.CSS("#what")))
	if got := text("#what"); !strings.HasPrefix(got, "Replay 100 messages from "+dlq+" back to "+source) {
		t.Errorf("the confirmation says %q", got)
	}
	shoot("confirm")
	step("confirm", chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS("#result")))
	if got, want := text("#result"), dlq+": replayed 100 of the 100 messages taken (the queue held 100); 0 left in place; "+dlq+" holds 0 ready now"; got != want {
		t.Errorf("the result says %q, want %q", got, want)
	}
	shoot("job")

	if n := depthOn(t, tr, dlq); n != 0 {
		t.Errorf("%d messages left in %s, want 0", n, dlq)
	}
	back := deliverytest.TakeAll(t, tr, source)
	if len(back) != 100 {
		t.Fatalf("%d messages back in %s, want 100", len(back), source)
	}
	for i, m := range back {
		r := acemq.ReadEnvelope(m)
		from, _ := m.Headers[contract.HeaderReplayedFrom].(string)
		_, at := m.Headers[contract.HeaderReplayedAt]
		if want := fmt.Sprintf("id-%05d", i); r.ID != want || from != dlq || !at || fmt.Sprint(m.Headers[contract.HeaderReplayCount]) != "1" || r.Attempt != 1 {
			t.Errorf("message %d back as id %q, attempt %d, headers %v; want %s with its provenance", i, r.ID, r.Attempt, m.Headers, want)
		}
	}

	// An action whose form lost its CSRF token is refused, and changes
	// nothing.
	publish(t, conn, dlq, 3)
	step("the queue page again", chromedp.Navigate(srv.URL+"/queue?name="+dlq), chromedp.WaitVisible(chromedp.CSS("#purge")))
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('#messages-form input[name=csrf]').remove(), true`)); err != nil {
		t.Fatal(err)
	}
	step("purge without the token", chromedp.Click(chromedp.CSS("#purge")), chromedp.WaitVisible(chromedp.CSS("#error")))
	if got := text("#error"); !strings.Contains(got, "CSRF token is missing or wrong") {
		t.Errorf("the refusal says %q", got)
	}
	if n := depthOn(t, tr, dlq); n != 3 {
		t.Errorf("%d messages in %s after a refused purge, want 3", n, dlq)
	}

	// Drift: the file wants a ladder and a parked queue of a queue that
	// lacks them.
	file := filepath.Join(t.TempDir(), "topology.yaml")
	top := fmt.Sprintf("queues:\n  - name: %s\n    type: classic\n    deadLetter: true\n    retry: \"fixed(2, 30s)\"\n", source)
	if err := os.WriteFile(file, []byte(top), 0o600); err != nil {
		t.Fatal(err)
	}
	step("drift", chromedp.Navigate(srv.URL+"/drift"), chromedp.WaitVisible(chromedp.CSS("#compare")),
		chromedp.SetUploadFiles(chromedp.CSS(`input[name=file]`), []string{file}),
		chromedp.Click(chromedp.CSS("#compare")), chromedp.WaitVisible(chromedp.CSS("#findings")))
	if got := text("#findings"); !strings.Contains(got, "missing-rung") {
		t.Errorf("the drift findings lack missing-rung:\n%s", got)
	}
	shoot("drift")
}

func depthOn(t *testing.T, tr transport.Transport, queue string) int {
	t.Helper()
	s, err := tr.InspectQueue(t.Context(), queue)
	if err != nil {
		t.Fatal(err)
	}
	return s.Messages
}

// readText runs get, again while the page is being replaced: a page that
// reloads between the query finding a node and reading it (a job page
// reloading for its result, on a loaded machine) loses the node, and the
// next attempt reads the new page. Bounded by a minute.
func readText(ctx context.Context, get chromedp.Action[string]) (string, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		v, err := chromedp.Run(ctx, get)
		if err == nil || time.Now().After(deadline) || !strings.Contains(err.Error(), "(-32000)") {
			return v, err
		}
		time.Sleep(50 * time.Millisecond) // polling the page, bounded by the deadline
	}
}

package console_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/internal/testing/browsertest"
	"github.com/acemq-go/acemq/internal/testing/deliverytest"
	"github.com/acemq-go/acemq/transport"
)

// publishPanics puts n dead letters in queue for one panic, each naming
// its own order: one reason group of n different texts.
func publishPanics(t *testing.T, conn *acemq.Conn, queue string, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		id := fmt.Sprintf("panic-%05d", i)
		c, err := conn.Transport().Publish(t.Context(), transport.Publishing{RoutingKey: queue, Mandatory: true, Message: transport.Message{
			Headers: transport.Table{contract.HeaderID: id, contract.HeaderAttempt: int64(1),
				contract.HeaderError: fmt.Sprintf("handler panicked: order o-%d: assignment to entry in nil map", 1000+i)},
			ContentType: "application/json", MessageID: id, Persistent: true, Body: fmt.Appendf(nil, `{"order":%d}`, i)}})
		if err == nil {
			err = c.Wait(t.Context())
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// The queue page in a headless Chromium against RabbitMQ: pages of 50
// with next and previous; a reason group of 40 panics (one row, though
// every text differs) replayed alone through its confirmation; "Replay
// all" while another tab views the page again and again, which moves
// every message and says so; and a purge that asks for the queue's name
// and removes what its confirmation counted.
func TestBrowserQueueViewsOnRabbitMQ(t *testing.T) {
	srv, conn := brokerConsole(t, "console browser views test")
	ctx := browsertest.Browser(t, 1024, 768)
	tr := conn.Transport()
	source := brokertest.UniqueName(t, "views")
	dlq := contract.DeadLetterQueue(source)
	for _, q := range []string{source, dlq} {
		if err := tr.DeclareQueue(t.Context(), transport.Queue{Name: q, Type: transport.Classic, Durable: true}); err != nil {
			t.Fatal(err)
		}
	}
	publish(t, conn, dlq, 80)
	publishPanics(t, conn, dlq, 0, 40)

	b := browse{t, ctx}
	step, text := b.step, b.text
	page := srv.URL + "/queue?name=" + dlq

	// Pages of 50.
	step("the queue page", chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#showing")))
	// A page shows what its snapshot has read so far (on a loaded machine
	// it may still be reading): reload until it has read the queue.
	for deadline := time.Now().Add(time.Minute); strings.HasSuffix(text("#showing"), "so far.") && time.Now().Before(deadline); {
		step("the queue page, reloaded", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#showing")))
	}
	if got := text("#showing"); got != "Messages 1 to 50 of the 120 read." {
		t.Errorf("page 1 says %q", got)
	}
	step("the next page", chromedp.Click(chromedp.CSS("#next")), chromedp.WaitVisible(chromedp.CSS("#prev")))
	if got := text("#showing"); got != "Messages 51 to 100 of the 120 read." {
		t.Errorf("page 2 says %q", got)
	}
	if got := text("#messages tbody tr:first-child .msgid"); got != "id-00050" {
		t.Errorf("page 2 begins with %q, want id-00050", got)
	}
	step("the previous page", chromedp.Click(chromedp.CSS("#prev")), chromedp.WaitVisible(chromedp.CSS("#next")))
	if got := text("#messages tbody tr:first-child .msgid"); got != "id-00000" {
		t.Errorf("page 1 begins with %q, want id-00000", got)
	}

	// The 40 panics are one group; replay it alone.
	groups := text("#reason-table")
	if !strings.Contains(groups, "40\tpanicked\thandler panicked: order o-<n>: assignment to entry in nil map") || strings.Count(groups, "panicked") != 2 {
		t.Errorf("the reason groups:\n%s", groups)
	}
	panicRow := `//tr[contains(@class,"group")][contains(., "handler panicked")]//button[contains(@class,"replay-group")]`
	step("replay the group", chromedp.Click(chromedp.Search(panicRow)), chromedp.WaitVisible(chromedp.CSS("#what")))
	if got := text("#what"); !strings.HasPrefix(got, "Replay 40 messages matching reasonTemplate == ") {
		t.Errorf("the group's confirmation says %q", got)
	}
	step("confirm the group", chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS("#result")))
	if got, want := text("#result"), dlq+": replayed 40 of the 120 messages taken (the queue held 120); 80 left in place; "+dlq+" holds 80 ready now (80 left in place by this job)"; got != want {
		t.Errorf("the group's replay says %q, want %q", got, want)
	}
	if n := depthOn(t, tr, source); n != 40 {
		t.Errorf("%d messages back in %s, want 40", n, source)
	}

	// Replay all while another tab views the page, refreshing.
	other, stop := context.WithCancel(t.Context())
	views := make(chan int)
	go func() {
		n := 0
		for other.Err() == nil {
			req, _ := http.NewRequestWithContext(other, http.MethodGet, page+"&refresh=1", nil)
			if resp, err := client.Do(req); err == nil {
				resp.Body.Close()
				n++
			}
		}
		views <- n
	}()
	step("the queue page again", chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#replay-matching")),
		chromedp.Click(chromedp.CSS("#replay-matching")), chromedp.WaitVisible(chromedp.CSS("#what")))
	step("confirm replay all", chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS("#result")))
	stop()
	t.Logf("the other tab viewed the page %d times", <-views)
	if got, want := text("#result"), dlq+": replayed 80 of the 80 messages taken (the queue held 80); 0 left in place; "+dlq+" holds 0 ready now"; got != want {
		t.Errorf("replay all says %q, want %q", got, want)
	}
	if got := len(deliverytest.TakeAll(t, tr, source)); got != 120 {
		t.Errorf("%d messages in %s, want 120", got, source)
	}

	// Purge: the queue's name must be typed; what arrives after the
	// confirmation stays.
	publishPanics(t, conn, dlq, 100, 10)
	step("purge", chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#purge")),
		chromedp.Click(chromedp.CSS("#purge")), chromedp.WaitVisible(chromedp.CSS("#typed")))
	if got := text("#what"); !strings.HasPrefix(got, "Purge "+dlq+": delete the 10 messages counted in it now") {
		t.Errorf("the purge's confirmation says %q", got)
	}
	step("a wrong name", chromedp.SendKeys(chromedp.CSS("#typed"), source), chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS("#error")))
	if got := text("#error"); !strings.Contains(got, "type its name") {
		t.Errorf("a purge with the wrong name typed says %q", got)
	}
	step("purge again", chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#purge")),
		chromedp.Click(chromedp.CSS("#purge")), chromedp.WaitVisible(chromedp.CSS("#typed")))
	publishPanics(t, conn, dlq, 200, 3)
	step("the right name", chromedp.SendKeys(chromedp.CSS("#typed"), dlq),
		chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS("#result")))
	if got, want := text("#result"), dlq+": purged 10 of the 10 messages taken (the queue held 13); 0 left in place; "+dlq+" holds 3 ready now, 3 of them not taken by this job (arrived since it began, past the number confirmed, or held by another reader when it began)"; got != want {
		t.Errorf("the purge says %q, want %q", got, want)
	}
	left := deliverytest.TakeAll(t, tr, dlq)
	if len(left) != 3 || acemq.ReadEnvelope(left[0]).ID != "panic-00200" {
		t.Errorf("%d messages left in %s, want the 3 published after the confirmation", len(left), dlq)
	}
}

package console_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/console"
	"github.com/acemq-go/acemq/internal/testing/browsertest"
)

// In a browser, the consumers page pauses, rescales and resumes a consumer
// of a service running in the test, through its actuator, and shows each
// change; a service whose actuator does not answer is shown as
// unreachable beside it, not as an error page. It takes the screenshot of
// docs/console.md.
func TestBrowserPausesAndResumesAConsumer(t *testing.T) {
	svc := runService(t)
	f := newFixture(t, 0, func(c *console.Config) {
		c.Services = []console.Service{{Name: "shop", URL: svc.url}, {Name: "billing", URL: unreachable(t)}}
	})
	b := browse{t, browsertest.Browser(t, 1024, 640)}
	row := `tr[data-consumer="orders"]`

	b.step("the consumers page", chromedp.Navigate(f.srv.URL+"/"), chromedp.Click(chromedp.CSS(`nav a[href="/consumers"]`)),
		chromedp.WaitVisible(chromedp.CSS(row+".consumer-running")))
	if got := b.text(row + " td.state"); got != "running" {
		t.Errorf("orders shows %q, want running", got)
	}
	if got := b.text(`section[data-service="billing"] .unreachable`); !strings.Contains(got, "unreachable") {
		t.Errorf("the unreachable service shows %q", got)
	}

	b.step("pause", chromedp.Click(chromedp.CSS(row+" button.pause")), chromedp.WaitVisible(chromedp.CSS(row+".consumer-paused")))
	if got, by := b.text(row+" td.state"), b.text(row+" td.paused-by"); got != "paused" || by != "operator" {
		t.Errorf("after the pause orders shows %q by %q, want paused by operator", got, by)
	}
	if st := svc.consumer.Status().State; st != acemq.ConsumerPaused {
		t.Errorf("after the pause the consumer is %s", st)
	}

	// The page before the rescale shows the consumer paused too: wait for
	// the page the form's answer loads (its scale), not for a row that
	// was there already, or the next click finds a node the navigation
	// took away.
	b.step("rescale", chromedp.SetValue(chromedp.CSS(row+` input[name="concurrency"]`), "4"),
		chromedp.Click(chromedp.CSS(row+` form.rescale button`)))
	b.until("the rescaled consumer's page", 30*time.Second, `document.readyState === "complete" &&
		document.querySelector('`+row+` td.scale')?.textContent.trim() === "4 / 20"`)
	if got := b.text(row + " td.state"); got != "paused" {
		t.Errorf("after the rescale orders shows %q, want paused", got)
	}
	if dir := os.Getenv(screenshotsEnv); dir != "" {
		png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "consumers.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	b.step("resume", chromedp.Click(chromedp.CSS(row+" button.resume")), chromedp.WaitVisible(chromedp.CSS(row+".consumer-running")))
	if got := b.text(row + " td.state"); got != "running" {
		t.Errorf("after the resume orders shows %q, want running", got)
	}
	if st := svc.consumer.Status(); st.State != acemq.ConsumerRunning || st.Scale.Concurrency != 4 {
		t.Errorf("after the resume the consumer is %s at %+v, want running at 4", st.State, st.Scale)
	}
}

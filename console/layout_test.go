package console_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/acemq-go/acemq/console"
	"github.com/acemq-go/acemq/console/internal/sample"
	"github.com/acemq-go/acemq/console/preview"
	"github.com/acemq-go/acemq/internal/testing/browsertest"
	"github.com/acemq-go/acemq/internal/testing/codectest"
	"github.com/acemq-go/acemq/transport"
)

// layoutFacts are what every page must be at its width: no wider than the
// window, and every button in the console's style. It returns what is
// wrong, "" when nothing.
const layoutFacts = `(() => {
  const wrong = [];
  const root = document.documentElement;
  if (root.scrollWidth > window.innerWidth) {
    const wide = [...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1).slice(0, 3).map(e => e.tagName + "#" + e.id + "." + e.className);
    wrong.push("the page is " + root.scrollWidth + " px wide in a window of " + window.innerWidth + " (" + wide.join(", ") + ")");
  }
  const bodyFont = getComputedStyle(document.body).fontFamily;
  for (const b of document.querySelectorAll("button, a.button")) {
    if (!b.offsetParent) { continue; }
    const s = getComputedStyle(b);
    if (s.borderTopLeftRadius !== "5px" || s.fontFamily !== bodyFont || !["rgb(47, 111, 202)", "rgb(184, 50, 36)", "rgb(255, 255, 255)"].includes(s.backgroundColor)) {
      wrong.push("button " + JSON.stringify(b.textContent.trim()) + " is styled " + s.borderTopLeftRadius + ", " + s.backgroundColor + ", " + s.fontFamily);
    }
  }
  return wrong.join("; ");
})()`

// The console at 800 px wide in Chromium, against RabbitMQ, with dead
// letters of every format and reason and a service's consumers: each page
// fits the window with its buttons styled; YAML previews keep their lines
// and protobuf shows its numbers; the overview shows the configured topology's drift and
// refreshes itself, but not while a form is being filled in.
func TestBrowserLayoutAt800(t *testing.T) {
	set, err := sample.DeadLetters(filepath.Dir(codectest.Path(t, "codec-samples.json")), "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	bodies, err := preview.New(set.Preview)
	if err != nil {
		t.Fatal(err)
	}
	topology := filepath.Join(t.TempDir(), "topology.yaml")
	svc := runService(t)
	o := consoleOnRabbitMQ(t, 0, func(c *console.Config) {
		c.Bodies, c.Topology = bodies, topology
		c.Services = []console.Service{{Name: "shop", URL: svc.url}, {Name: "billing", URL: unreachable(t)}}
	})
	top := fmt.Sprintf("queues:\n  - name: %s\n    type: classic\n    deadLetter: true\n    retry: \"fixed(2, 30s)\"\n", o.source)
	if err := os.WriteFile(topology, []byte(top), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, m := range set.Messages {
		c, err := o.conn.Transport().Publish(t.Context(), transport.Publishing{RoutingKey: o.dlq, Mandatory: true, Message: m})
		if err == nil {
			err = c.Wait(t.Context())
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	b := browse{t, browsertest.Browser(t, 800, 900)}
	// check reads the layout facts of the page once it is loaded; a page
	// still laying out (a job's page reloads itself when the job ends) is
	// read again for up to 30 s (a loaded machine) before what is wrong
	// counts.
	check := func(page string) {
		t.Helper()
		var wrong string
		for deadline := time.Now().Add(30 * time.Second); ; {
			var err error
			wrong, err = chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.readyState === "complete" ? `+layoutFacts+` : "still loading"`))
			if err != nil {
				t.Fatal(err)
			}
			if wrong == "" || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond) // polling the page, bounded by the deadline
		}
		if wrong != "" {
			t.Errorf("%s at 800 px: %s", page, wrong)
		}
	}

	b.step("the overview", chromedp.Navigate(o.url+"/"), chromedp.WaitVisible(chromedp.CSS("#overview")))
	check("the overview")
	if got := b.text("#drift-count"); got == "" || got == "0" {
		t.Errorf("the overview shows %q differences with the topology file, want some", got)
	}
	b.step("the drift page from the overview", chromedp.Click(chromedp.CSS("#drift-link")), chromedp.WaitVisible(chromedp.CSS("#findings")))
	check("the drift page")

	b.step("the queue page", chromedp.Navigate(o.url+"/queue?name="+o.dlq), chromedp.WaitVisible(chromedp.CSS("#messages")))
	check("the queue page")
	previews, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("code.body")].map(c => c.innerText)`))
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(previews, "\n----\n")
	for _, want := range []string{"orderId: A-1\ncustomer: acme\n", "orderId = 'A-1'\ncustomer = 'acme'\n", `2: {2: 4250.0}`, `"totalCents":4250`, "<orderId>A-1</orderId>"} {
		if !strings.Contains(all, want) {
			t.Errorf("no preview shows %q; the previews:\n%s", want, all)
		}
	}

	b.step("the editor", chromedp.Navigate(o.url+"/edit?queue="+o.dlq+"&id=sample-000"), chromedp.WaitVisible(chromedp.CSS("#edit-body")))
	check("the editor")
	b.step("the review", chromedp.SetValue(chromedp.CSS("#edit-body"), `{"orderId":"A-1"}`), chromedp.Click(chromedp.CSS("#review")), chromedp.WaitVisible(chromedp.CSS("#what")))
	check("the review of an edit")

	b.step("a confirmation", chromedp.Navigate(o.url+"/queue?name="+o.dlq), chromedp.WaitVisible(chromedp.CSS("#export")),
		chromedp.Click(chromedp.CSS("#export")), chromedp.WaitVisible(chromedp.CSS("#confirm")))
	check("a confirmation")
	b.step("a job", chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS("#result")))
	check("a job")

	// Auto-refresh: on by default on the overview; it reloads the page.
	b.step("the consumers page", chromedp.Navigate(o.url+"/consumers"), chromedp.WaitVisible(chromedp.CSS(`tr[data-consumer="orders"]`)))
	check("the consumers page")
	b.step("the overview again", chromedp.Navigate(o.url+"/"), chromedp.WaitVisible(chromedp.CSS("#auto-refresh")))
	on, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`document.getElementById("auto-refresh").checked`))
	if err != nil || !on {
		t.Fatalf("auto-refresh is not on by default (%v)", err)
	}
	b.step("mark the page", void(chromedp.Evaluate[bool](`window.acemqMark = true`)))
	b.until("an auto-refresh", 30*time.Second, `window.acemqMark === undefined && document.readyState === "complete" && !!document.getElementById("auto-refresh")`)
	// A form being filled in holds it back, and the page says so.
	b.step("a form being filled in",
		void(chromedp.Evaluate[bool](`(() => { const i = document.createElement("input"); i.type = "text"; i.id = "probe"; document.querySelector("main").append(i); return true })()`)),
		chromedp.SendKeys(chromedp.CSS("#probe"), "half-typed"), void(chromedp.Evaluate[bool](`document.getElementById("probe").blur(), window.acemqMark = true`)),
		void(chromedp.Poll[bool](`document.getElementById("refresh-note").textContent.includes("paused: a form is being filled in")`, chromedp.WithPollingTimeout(30*time.Second))))
	if still, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`window.acemqMark === true && document.getElementById("probe").value === "half-typed"`)); err != nil || !still {
		t.Errorf("the page was refreshed with a form being filled in (%v)", err)
	}
	// Off is remembered.
	b.step("auto-refresh off", chromedp.Click(chromedp.CSS("#auto-refresh")), chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#auto-refresh")))
	if on, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`document.getElementById("auto-refresh").checked`)); err != nil || on {
		t.Errorf("auto-refresh is on again after a reload, having been turned off (%v)", err)
	}
}

// void drops an action's value, for a step.
func void[T any](a chromedp.Action[T]) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := a(ctx, t)
		return chromedp.Void{}, err
	}
}

// until evaluates cond (JavaScript) until it is true, through the page's
// reloads, failing after within.
func (b browse) until(what string, within time.Duration, cond string) {
	b.t.Helper()
	deadline := time.Now().Add(within)
	for {
		ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](cond))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("%s: not within %s (%v)", what, within, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

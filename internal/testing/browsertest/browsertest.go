// Package browsertest starts a headless Chromium for tests that drive the
// console through a browser (chromedp). The browser is $ACEMQ_TEST_CHROMIUM,
// else chromium on PATH (scripts/chromium.sh installs Debian's). Under CI
// (CI=true) a test without a browser fails; elsewhere it skips, saying how
// to get one.
//
// Only tests import it: chromedp stays out of every package a service links.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
)

// Env names the browser to use.
const Env = "ACEMQ_TEST_CHROMIUM"

// Path is the browser's executable, or "" when there is none.
func Path() string {
	if p := os.Getenv(Env); p != "" {
		return p
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		return ""
	}
	return p
}

// Browser returns a chromedp context of a new headless Chromium, with a
// fresh profile, a window of width by height and no network of its own
// (no updates, sync or first-run pages: on a closed network they hang it).
// The browser is stopped when the test ends.
func Browser(t testing.TB, width, height int) context.Context {
	t.Helper()
	path := Path()
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no Chromium: set %s or put chromium on PATH (bash scripts/chromium.sh path installs it)", Env)
		}
		t.Skipf("no Chromium: set %s or put chromium on PATH (bash scripts/chromium.sh path installs it)", Env)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s=%s: %v", Env, path, err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true), // tests run as root
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}

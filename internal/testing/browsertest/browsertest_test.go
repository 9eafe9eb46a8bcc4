package browsertest_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/acemq-go/acemq/internal/testing/browsertest"
)

func TestBrowserLoadsAPage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!doctype html><title>t</title><p id="p">hello</p>`))
	}))
	defer srv.Close()
	ctx := browsertest.Browser(t, 800, 600)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL)); err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#p")))
	if err != nil {
		t.Fatal(err)
	}
	if text != "hello" {
		t.Errorf("the page says %q, want hello", text)
	}
}

// Command screenshots takes the screenshots of docs/console.md: it fills a
// vhost of its own on a RabbitMQ node with dead letters of every format and
// reason (package sample), serves a console on it, drives a headless
// Chromium (chromedp) through the pages and writes a PNG of each to -out.
// `make console-screenshots` runs it on the checkout's 4.3 test node.
//
// It needs the broker's AMQP and management URLs ($ACEMQ_TEST_URL,
// $ACEMQ_TEST_MANAGEMENT_URL, as the test nodes set them) and a Chromium
// ($ACEMQ_TEST_CHROMIUM, else chromium on the PATH).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/admin"
	"github.com/acemq-go/acemq/console"
	"github.com/acemq-go/acemq/console/internal/sample"
	"github.com/acemq-go/acemq/console/preview"
	"github.com/acemq-go/acemq/contract"
)

// vhost is where the screenshots' queues live; made, then deleted.
const vhost = "acemq-console-screenshots"

func main() {
	out := flag.String("out", "docs/console", "the directory to write the PNGs to")
	fixtures := flag.String("fixtures", "testdata/fixtures", "the family's fixtures (codec-samples.json, crypto-interop.json)")
	width := flag.Int("width", 1100, "the browser window's width, in CSS pixels")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("console-screenshots: ")
	if err := run(*out, *fixtures, *width); err != nil {
		log.Fatal(err)
	}
}

func run(out, fixtures string, width int) error {
	amqpURL, mgmtURL := os.Getenv("ACEMQ_TEST_URL"), os.Getenv("ACEMQ_TEST_MANAGEMENT_URL")
	if amqpURL == "" || mgmtURL == "" {
		return errors.New("set ACEMQ_TEST_URL and ACEMQ_TEST_MANAGEMENT_URL (make console-screenshots does, for the 4.3 test node)")
	}
	browser := os.Getenv("ACEMQ_TEST_CHROMIUM")
	if browser == "" {
		p, err := exec.LookPath("chromium")
		if err != nil {
			return errors.New("no Chromium: set ACEMQ_TEST_CHROMIUM (bash scripts/chromium.sh path installs it)")
		}
		browser = p
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	if err := management(ctx, mgmtURL, http.MethodPut, "/api/vhosts/"+vhost, "{}"); err != nil {
		return err
	}
	defer management(context.Background(), mgmtURL, http.MethodDelete, "/api/vhosts/"+vhost, "")
	u, err := url.Parse(mgmtURL)
	if err != nil {
		return err
	}
	if err := management(ctx, mgmtURL, http.MethodPut, "/api/permissions/"+vhost+"/"+u.User.Username(), `{"configure":".*","write":".*","read":".*"}`); err != nil {
		return err
	}
	vhostURL := strings.TrimSuffix(amqpURL, "/") + "/" + vhost
	conn, err := acemq.Connect(ctx, vhostURL)
	if err != nil {
		return err
	}
	defer conn.Close()

	set, err := fill(ctx, conn, fixtures)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "acemq-console-screenshots-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	topology, err := os.Create(filepath.Join(tmp, "topology.yaml"))
	if err != nil {
		return err
	}
	// The file wants a ladder the broker lacks: the overview shows drift.
	if _, err := fmt.Fprintf(topology, "queues:\n  - name: orders.placed\n    type: classic\n    deadLetter: true\n    retry: \"fixed(3, 10s)\"\n  - name: payments.captured\n    type: classic\n    deadLetter: true\n"); err != nil {
		return err
	}
	topology.Close()

	endpoint, err := admin.EndpointFor(vhostURL, mgmtURL)
	if err != nil {
		return err
	}
	bodies, err := preview.New(set.Preview)
	if err != nil {
		return err
	}
	s, err := console.New(console.Config{Conn: conn, Endpoint: endpoint, Bodies: bodies, Topology: topology.Name()})
	if err != nil {
		return err
	}
	defer s.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go s.Serve(sctx, l)
	return shoot(ctx, browser, "http://"+l.Addr().String(), out, width)
}

// fill declares two source queues with their dead-letter and parked
// queues and rungs, and sets the sample dead letters aside in them.
func fill(ctx context.Context, conn *acemq.Conn, fixtures string) (sample.Set, error) {
	orders, payments := "orders.placed", "payments.captured"
	var queues acemq.Topology
	for _, q := range []string{orders, contract.DeadLetterQueue(orders), contract.ParkedQueue(orders), contract.RungQueue(orders, 10*time.Second, contract.ContractRungs),
		contract.RungQueue(orders, time.Minute, contract.ContractRungs), payments, contract.DeadLetterQueue(payments), contract.ParkedQueue(payments)} {
		queues.Queues = append(queues.Queues, acemq.QueueSpec{Name: q, Type: "classic"})
	}
	if err := queues.Apply(ctx, conn); err != nil {
		return sample.Set{}, err
	}
	set, err := sample.DeadLetters(fixtures, orders, time.Now())
	if err != nil {
		return set, err
	}
	other, err := sample.DeadLetters(fixtures, payments, time.Now().Add(-time.Hour))
	if err != nil {
		return set, err
	}
	publish := func(queue string, msgs []acemq.RawMessage) error {
		for _, m := range msgs {
			sent, err := conn.Publish(ctx, "", queue, m)
			if err == nil {
				err = sent.Wait(ctx)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	return set, errors.Join(publish(contract.DeadLetterQueue(orders), set.Messages),
		publish(contract.DeadLetterQueue(payments), other.Messages[:3]), publish(contract.ParkedQueue(payments), other.Messages[3:5]))
}

// shoot drives the browser through the pages, a PNG of each.
func shoot(ctx context.Context, browser, base, out string, width int) error {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(browser), chromedp.WindowSize(width, 900),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("no-first-run", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-extensions", true), chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("hide-scrollbars", true),
	}
	dir, err := os.MkdirTemp("", "acemq-console-screenshots-chromium-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	opts = append(opts, chromedp.UserDataDir(dir))
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	// Start the browser on bctx itself: ending the first context a browser
	// is run with closes it, and the steps' contexts below end.
	if err := chromedp.Do(bctx); err != nil {
		return fmt.Errorf("starting %s: %w", browser, err)
	}

	dlq := contract.DeadLetterQueue("orders.placed")
	png := func(name string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			b, err := chromedp.FullScreenshot(100)(ctx, t)
			if err != nil {
				return err
			}
			path := filepath.Join(out, name+".png")
			log.Printf("%s (%d KB)", path, len(b)/1024)
			return os.WriteFile(path, b, 0o644)
		})
	}
	visible := func(sel string) chromedp.Action[chromedp.Void] { return chromedp.WaitVisible(chromedp.CSS(sel)) }
	steps := []struct {
		name    string
		actions []chromedp.Action[chromedp.Void]
	}{
		{"overview", []chromedp.Action[chromedp.Void]{chromedp.Navigate(base + "/"), visible("#overview")}},
		{"queue", []chromedp.Action[chromedp.Void]{chromedp.Navigate(base + "/queue?name=" + dlq), visible("#messages")}},
		{"confirm", []chromedp.Action[chromedp.Void]{chromedp.Click(chromedp.CSS("#replay-matching")), visible("#confirm")}},
		{"edit", []chromedp.Action[chromedp.Void]{chromedp.Navigate(base + "/edit?queue=" + dlq + "&id=sample-000"), visible("#edit-body"),
			chromedp.SetValue(chromedp.CSS("#edit-body"), "{\"orderId\":\"A-1\",\"customer\":\"acme\",\"totalCents\":4250,\"currency\":\"GBP\",\"paid\":true,\"card\":\"retry-with-3ds\"}")}},
		{"edit-review", []chromedp.Action[chromedp.Void]{chromedp.Click(chromedp.CSS("#review")), visible("#copy-headers")}},
		{"edit-done", []chromedp.Action[chromedp.Void]{chromedp.Click(chromedp.CSS("#confirm")), visible("#result")}},
		{"job", []chromedp.Action[chromedp.Void]{chromedp.Navigate(base + "/queue?name=" + contract.DeadLetterQueue("payments.captured")), visible("#replay-matching"),
			chromedp.Click(chromedp.CSS("#replay-matching")), visible("#confirm"), chromedp.Click(chromedp.CSS("#confirm")), visible("#result")}},
		{"drift", []chromedp.Action[chromedp.Void]{chromedp.Navigate(base + "/drift?configured=1"), visible("#findings")}},
	}
	for _, st := range steps {
		sctx, cancel := context.WithTimeout(bctx, 30*time.Second)
		err := chromedp.Do(sctx, append(st.actions, png(st.name))...)
		cancel()
		if err != nil {
			return fmt.Errorf("the %s page: %w", st.name, err)
		}
	}
	return nil
}

// management calls the management API at base (http://user:pass@host:port).
func management(ctx context.Context, base, method, path, body string) error {
	u, err := url.Parse(base)
	if err != nil {
		return err
	}
	pass, _ := u.User.Password()
	req, err := http.NewRequestWithContext(ctx, method, u.Scheme+"://"+u.Host+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.SetBasicAuth(u.User.Username(), pass)
	req.Header.Set("Content-Type", contract.ContentTypeJSON)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, bytes.TrimSpace(b))
	}
	return nil
}

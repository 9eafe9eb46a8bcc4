// Command console-page times the console's queue page at two depths of one
// dead-letter queue (100 and 10,000 dead letters by default), in one run on
// one broker: the time to the first byte of a first view (which starts the
// snapshot's pass and answers once its page is read), the page's whole
// time and size, then, from the snapshot, the next page, a filter, and the
// time until the pass has read the whole queue.
//
//	cd bench && go run ./cmd/console-page
//
// Each depth gets a console of its own, so that no snapshot is cached. The
// broker is ACEMQ_TEST_URL (or -url), its management API
// ACEMQ_TEST_MANAGEMENT_URL (or -management-url).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/acemq-go/acemq/bench/internal/brokerflags"
	"github.com/acemq-go/acemq/console"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

func main() {
	var (
		broker = brokerflags.Register()
		small  = flag.Int("small", 100, "dead letters of the small queue")
		large  = flag.Int("large", 10000, "dead letters of the large queue")
	)
	flag.Parse()
	// A first view of one message warms the process (connections to the
	// management API, templates) before the two measured.
	if err := run(broker, []int{1, *small, *large}); err != nil {
		fmt.Fprintln(os.Stderr, "console-page:", err)
		os.Exit(1)
	}
}

func run(broker brokerflags.Broker, depths []int) error {
	ctx := context.Background()
	conn, endpoint, err := broker.Connect(ctx, "console-page bench")
	if err != nil {
		return err
	}
	defer conn.Close()
	tr := conn.Transport()
	var first []time.Duration
	for _, n := range depths {
		dlq := contract.DeadLetterQueue(fmt.Sprintf("bench.console-page.%d.%d", n, time.Now().UnixNano()))
		if err := tr.DeclareQueue(ctx, transport.Queue{Name: dlq, Type: transport.Classic, Durable: true}); err != nil {
			return err
		}
		defer tr.DeleteQueue(context.Background(), dlq)
		if err := seed(ctx, tr, dlq, n); err != nil {
			return err
		}
		s, err := console.New(console.Config{Conn: conn, Endpoint: endpoint})
		if err != nil {
			return err
		}
		srv := httptest.NewServer(s)
		page := srv.URL + "/queue?name=" + url.QueryEscape(dlq)
		ttfb, total, size, err := get(page)
		if err != nil {
			return err
		}
		first = append(first, ttfb)
		_, next, _, err := get(page + "&page=2")
		if err != nil {
			return err
		}
		_, filter, _, err := get(page + "&match=" + url.QueryEscape(`reasonTemplate startsWith "handler panicked" && attempt == 1`))
		if err != nil {
			return err
		}
		start, whole := time.Now(), time.Duration(0)
		for whole == 0 { // the last page, until the pass has read it all
			_, _, _, body, err := fetch(page + fmt.Sprintf("&page=%d", max(1, (n+49)/50)))
			if err != nil {
				return err
			}
			if strings.Contains(body, "Snapshot of ") {
				whole = time.Since(start)
			}
		}
		fmt.Printf("%6d dead letters: first view %s to the first byte, %s whole (%d bytes); page 2 %s; a filter %s; the whole queue read %s after the first view\n",
			n, ttfb.Round(time.Millisecond), total.Round(time.Millisecond), size, next.Round(time.Millisecond), filter.Round(time.Millisecond), (whole + total).Round(time.Millisecond))
		srv.Close()
		s.Close()
	}
	if k := len(first); k >= 2 {
		fmt.Printf("time to the first byte at %d / at %d: %.2f\n", depths[k-1], depths[k-2], float64(first[k-1])/float64(first[k-2]))
	}
	return nil
}

// get fetches a page: the time to its first byte, its whole time, its size.
func get(u string) (ttfb, total time.Duration, size int, err error) {
	ttfb, total, size, _, err = fetch(u)
	return ttfb, total, size, err
}

func fetch(u string) (ttfb, total time.Duration, size int, body string, err error) {
	var firstByte time.Time
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return 0, 0, 0, "", err
	}
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{GotFirstResponseByte: func() { firstByte = time.Now() }}))
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0, 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, 0, 0, "", err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, 0, 0, "", fmt.Errorf("GET %s: HTTP %d", u, resp.StatusCode)
	}
	return firstByte.Sub(start), time.Since(start), len(b), string(b), nil
}

// seed puts n dead letters in dlq: three of four for one panic naming
// its own order, the others exhausted.
func seed(ctx context.Context, tr transport.Transport, dlq string, n int) error {
	var pending []*transport.Confirmation
	for i := range n {
		id := fmt.Sprintf("m-%06d", i)
		reason := contract.ReasonTextPanicked + fmt.Sprintf("order o-%d: assignment to entry in nil map", i)
		if i%4 == 3 {
			reason = contract.ExhaustedReason(5) + ": timeout"
		}
		c, err := tr.Publish(ctx, transport.Publishing{RoutingKey: dlq, Mandatory: true, Message: transport.Message{
			Headers:     transport.Table{contract.HeaderID: id, contract.HeaderAttempt: int64(1), contract.HeaderError: reason},
			ContentType: contract.ContentTypeJSON, MessageID: id, Persistent: true, Body: fmt.Appendf(nil, `{"order":%d,"sku":"X-%d"}`, i, i%97)}})
		if err != nil {
			return err
		}
		pending = append(pending, c)
	}
	for _, c := range pending {
		if err := c.Wait(ctx); err != nil {
			return err
		}
	}
	return nil
}

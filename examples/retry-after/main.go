// Command retry-after is a delay the handler chooses (acemq.RetryAfter) at
// work: a handler syncing stock with an HTTP dependency that answers 429
// and 503 with a Retry-After header, in both of its forms (seconds, and an
// HTTP date), retries each message when the dependency said, not when the
// policy would have: a short wait in the consumer, a long one on the retry
// ladder's rung at or above it.
//
//	go run ./examples/retry-after                  # memory://
//	go run ./examples/retry-after -broker amqp://guest:guest@localhost:5672/
//
// Against a real broker it uses queues of its own, named for the run, and
// deletes them at the end.
package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/examples/internal/example"
	"github.com/acemq-go/acemq/transport"
)

// Sync asks to sync the stock of SKU.
type Sync struct {
	SKU string `json:"sku"`
}

// policy's own waits are 10s, 20s, 40s, 80s and 160s; those from 30s on
// wait on the rungs 40s, 80s and 160s. A Retry-After longer than 160s
// waits 160s: the policy's maximum bounds what a handler may ask.
var policy = acemq.Exponential(6, 10*time.Second, 160*time.Second)

func main() { example.Main(run) }

func run(ctx context.Context, conn *acemq.Conn) error {
	stock := httptest.NewServer(dependency())
	defer stock.Close()

	queue := "stock.sync." + example.Suffix()
	topology := acemq.Topology{Queues: []acemq.QueueSpec{{Name: queue, Type: transport.Classic, Retry: &policy}}}
	if err := topology.Apply(ctx, conn); err != nil {
		return err
	}
	defer example.DeleteQueues(conn, append(example.Queues(topology), example.WithDeadLetters(queue)...)...)

	consumer, err := acemq.Consume(ctx, conn, queue, func(ctx context.Context, m acemq.Message[Sync]) acemq.Decision {
		return syncStock(ctx, stock.URL, m)
	}, acemq.WithPolicy(policy))
	if err != nil {
		return err
	}
	defer func() { _, _ = consumer.Close(context.Background()) }()
	publisher, err := acemq.NewPublisher[Sync](conn, "")
	if err != nil {
		return err
	}

	// One at a time, so that the lines come in order.
	for _, sku := range []string{"sku-1", "sku-2"} {
		accepted := consumer.Stats().Accepted
		if err := publisher.Publish(ctx, queue, Sync{SKU: sku}); err != nil {
			return err
		}
		if err := until(ctx, func() bool { return consumer.Stats().Accepted > accepted }); err != nil {
			return fmt.Errorf("%s not synced: %w", sku, err)
		}
	}
	if err := publisher.Publish(ctx, queue, Sync{SKU: "sku-3"}); err != nil {
		return err
	}
	if err := until(ctx, func() bool { return consumer.Stats().RetriedOnRung == 1 }); err != nil {
		return fmt.Errorf("sku-3 not on a rung: %w", err)
	}
	rung := contract.RungQueue(queue, 160*time.Second, contract.DefaultRungKind)
	state, err := conn.InspectQueue(ctx, rung)
	if err != nil {
		return err
	}
	fmt.Printf("sku-3 waits on the rung %s (%d message): 90s rounded up to the ladder's next rung\n",
		strings.Replace(rung, queue, "stock.sync", 1), state.Messages)
	return nil
}

// syncStock calls the dependency and decides from its answer.
func syncStock(ctx context.Context, url string, m acemq.Message[Sync]) acemq.Decision {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/sync?sku="+m.Body.SKU, nil)
	if err != nil {
		return acemq.Reject(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return acemq.Retry(err)
	}
	defer resp.Body.Close()
	d := decide(resp)
	shown := resp.Header.Get("Retry-After")
	if _, err := http.ParseTime(shown); err == nil {
		shown = "an HTTP date"
	}
	if shown != "" {
		shown = ", Retry-After: " + shown
	}
	fmt.Printf("%s attempt %d: %s%s: %s\n", m.Body.SKU, m.Envelope.Attempt, resp.Status, shown, d)
	return d
}

// decide turns an HTTP answer into a decision: a success accepts; 429 or
// 503 retries after the wait its Retry-After names (RetryAfter), or on the
// policy's own schedule without one; any other failure retries on the
// policy's schedule too.
func decide(resp *http.Response) acemq.Decision {
	if resp.StatusCode < 300 {
		return acemq.Accept()
	}
	err := errors.New(resp.Status)
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		if wait, ok := retryAfter(resp.Header); ok {
			return acemq.RetryAfter(wait, err)
		}
	}
	return acemq.Retry(err)
}

// retryAfter reads a Retry-After header (RFC 9110, section 10.2.3): a
// number of seconds, or an HTTP date, counted from the answer's own Date
// when it has one, so that the two machines' clocks need not agree.
func retryAfter(h http.Header) (time.Duration, bool) {
	value := strings.TrimSpace(h.Get("Retry-After"))
	if seconds, err := strconv.Atoi(value); err == nil && seconds >= 0 {
		return time.Duration(seconds) * time.Second, true
	}
	at, err := http.ParseTime(value)
	if err != nil {
		return 0, false
	}
	now := time.Now()
	if date, err := http.ParseTime(h.Get("Date")); err == nil {
		now = date
	}
	return max(at.Sub(now), 0), true
}

// dependency is the stock service: sku-1 is refused once with 429 and a
// Retry-After of 1 second, sku-2 once with 503 and a Retry-After of an
// HTTP date 2 seconds after the answer's Date, sku-3 with 503 and 90
// seconds; after that, it succeeds.
func dependency() http.Handler {
	var mu sync.Mutex
	calls := map[string]int{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sku := r.URL.Query().Get("sku")
		mu.Lock()
		calls[sku]++
		first := calls[sku] == 1
		mu.Unlock()
		now := time.Now().UTC().Truncate(time.Second)
		w.Header().Set("Date", now.Format(http.TimeFormat))
		switch {
		case !first:
			w.WriteHeader(http.StatusOK)
		case sku == "sku-1":
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		case sku == "sku-2":
			w.Header().Set("Retry-After", now.Add(2*time.Second).Format(http.TimeFormat))
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			w.Header().Set("Retry-After", "90")
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
}

// until polls cond until it holds or ctx ends.
func until(ctx context.Context, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

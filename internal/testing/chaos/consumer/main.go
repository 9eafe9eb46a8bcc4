// Command consumer is the consumer process of the chaos harness
// (internal/testing/chaos): it consumes a queue with a retry policy, failing some
// messages on purpose by their number, and records every accept in a log file
// before the library acks it, so that a SIGKILL can duplicate a record but
// never lose one. SIGTERM closes it gracefully.
//
// Handler, by message number n: n%10 in 0..5 accept; 6 fails on attempt 1
// only; 7 fails on attempts 1 and 2; 8 always fails (Q.dlq once exhausted).
// The harness publishes every n%10 == 9 as a body that is not JSON, which
// the library parks without calling the handler.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
)

// DefaultPolicy waits 500ms in the consumer, then 1s and 2s on rungs, so that
// every path of settlement runs within a few seconds.
const DefaultPolicy = "exponential(4, 500ms, 2s).waitInBrokerFrom(1s)"

type item struct {
	N int `json:"n"`
}

func main() {
	url := flag.String("url", "", "AMQP URL of the broker")
	queue := flag.String("queue", "", "queue to consume (it must exist)")
	logPath := flag.String("log", "", "file every accepted message number is appended to")
	name := flag.String("name", "", "client-provided connection name")
	policyText := flag.String("policy", DefaultPolicy, "retry policy notation")
	rungs := flag.String("rungs", "", "kind of rungs: at-least-once or contract (none: no WithRungs, the library's default)")
	idem := idempotentFlags()
	var fallbacks []string
	flag.Func("fallback", "another cluster node's AMQP URL (repeatable)", func(u string) error {
		fallbacks = append(fallbacks, u)
		return nil
	})
	flag.Parse()
	if err := run(*url, fallbacks, *queue, *logPath, *name, *policyText, contract.RungKind(*rungs), idem); err != nil {
		fmt.Fprintln(os.Stderr, "chaos consumer:", err)
		os.Exit(1)
	}
}

func run(url string, fallbacks []string, queue, logPath, name, policyText string, rungs contract.RungKind, idem *idempotentConfig) error {
	if url == "" || queue == "" || logPath == "" {
		return errors.New("--url, --queue and --log are required")
	}
	policy, err := acemq.ParsePolicy(policyText)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	var mu sync.Mutex
	record := func(n int) error {
		mu.Lock()
		defer mu.Unlock()
		if _, err := f.WriteString(strconv.Itoa(n) + "\n"); err != nil {
			return err
		}
		return f.Sync()
	}

	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	opts := []acemq.ConnectOption{acemq.WithLogger(logger), acemq.WithFallbackURLs(fallbacks...)}
	if name != "" {
		opts = append(opts, acemq.WithConnectionName(name))
	}
	connectCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	conn, err := acemq.Connect(connectCtx, url, opts...)
	cancel()
	if err != nil {
		return err
	}
	defer conn.Close()

	handler := func(ctx context.Context, m acemq.Message[item]) acemq.Decision {
		if err := failOnPurpose(m); err != nil {
			return acemq.Retry(err)
		}
		if err := record(m.Body.N); err != nil {
			// Not recorded, so not accepted: it comes back later.
			return acemq.Retry(fmt.Errorf("recording message %d: %w", m.Body.N, err))
		}
		return acemq.Accept()
	}
	var counts *idempotentCounts
	if idem.enabled() {
		var closeStore func() error
		handler, counts, closeStore, err = idem.handler(ctx, record)
		if err != nil {
			return err
		}
		defer closeStore()
	}
	copts := []acemq.ConsumeOption{acemq.WithPolicy(policy), acemq.WithConcurrency(8), acemq.WithPrefetch(64)}
	if rungs != "" { // else the library's default, as a service that picks none gets
		copts = append(copts, acemq.WithRungs(rungs))
	}
	consumer, err := acemq.Consume(ctx, conn, queue, handler, copts...)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "chaos consumer: consuming", queue)
	// A line of stats every 100ms, so that the harness can tell what a
	// SIGKILLed process was in the middle of.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-tick.C:
			printStats(consumer.Stats(), counts)
		}
	}
	closeCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	report, err := consumer.Close(closeCtx)
	printStats(consumer.Stats(), counts)
	fmt.Fprintf(os.Stderr, "chaos consumer: closed: %+v\n", report)
	return err
}

// failOnPurpose is the error message m fails with on its attempt, by its
// number (the package comment), or nil.
func failOnPurpose(m acemq.Message[item]) error {
	n, attempt := m.Body.N, m.Envelope.Attempt
	fail := false
	switch n % 10 {
	case 6:
		fail = attempt <= 1
	case 7:
		fail = attempt <= 2
	case 8:
		fail = true
	}
	if fail {
		return fmt.Errorf("message %d fails on attempt %d on purpose", n, attempt)
	}
	return nil
}

// printStats writes the line the harness reads (internal/testing/chaos parses it),
// with the idempotent consumer's counts when it is one. Its requeued counts
// every delivery back on its queue, handed back or put back as a copy, as
// the reports in docs/reliability.md do.
func printStats(st acemq.Stats, idem *idempotentCounts) {
	extra := ""
	if idem != nil {
		extra = fmt.Sprintf(" duplicates-absorbed=%d put-back=%d", idem.absorbed.Load(), idem.putBack.Load())
	}
	fmt.Fprintf(os.Stderr, "stats waiting=%d accepted=%d retried-in-consumer=%d retried-on-rung=%d dead-lettered=%d parked=%d requeued=%d rung-missing=%d set-aside-failed=%d%s\n",
		st.Waiting, st.Accepted, st.RetriedInConsumer, st.RetriedOnRung, st.DeadLettered, st.Parked, st.Requeued+st.PutBack, st.RungMissing, st.SetAsideFailed, extra)
}

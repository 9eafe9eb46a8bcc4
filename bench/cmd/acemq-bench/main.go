// Command acemq-bench runs AceMQ, raw amqp091-go and Watermill side by side
// on one RabbitMQ broker, in alternating rounds, and reports each figure as
// a median with its spread and its ratio to raw in the same rounds.
//
//	cd bench && go run ./cmd/acemq-bench -quick
//
// The broker is ACEMQ_TEST_URL (or -url); `make bench` and `make
// bench-quick` run it against the test node.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/bench/internal/harness"
	"github.com/acemq-go/acemq/bench/internal/micro"
	"github.com/acemq-go/acemq/bench/internal/report"
)

type config struct {
	url          string
	quick        bool
	messages     int
	rungMessages int
	kindMessages int
	requests     int
	rounds       int
	timeout      time.Duration
	only         string
	noWatermill  bool
	noEnvelope   bool
	noObservers  bool
	traceRatio   float64
	micro        bool
	codecs       bool
	microOnly    bool
	postgres     string
	benchtime    string
	out          string
	root         string
	cpuProfile   string
	trace        string
	// resized: a size was set by flag, so the run is neither quick nor full.
	resized bool
}

func main() {
	var c config
	flag.StringVar(&c.url, "url", os.Getenv("ACEMQ_TEST_URL"), "AMQP URL of the broker (default $ACEMQ_TEST_URL)")
	flag.BoolVar(&c.quick, "quick", false, "a smaller run (defaults: 1000 messages, 300 on the rung, 1000 for the rung kinds, 500 round trips, 3 rounds, benchtime 2000x)")
	flag.IntVar(&c.messages, "messages", 0, "messages per run of publish/consume/retry-in-consumer (default 10000, quick 1000)")
	flag.IntVar(&c.rungMessages, "rung-messages", 0, "messages per run of retry-on-rung and per-message TTL (default 2000, quick 300)")
	flag.IntVar(&c.kindMessages, "kinds-messages", 0, "messages per run of the rung-kinds scenario (default 2000, quick 1000)")
	flag.IntVar(&c.requests, "requests", 0, "round trips per run of the request-reply scenarios (default 2000, quick 500)")
	flag.IntVar(&c.rounds, "rounds", 0, "rounds per scenario (default 5, quick 3)")
	flag.DurationVar(&c.timeout, "timeout", 5*time.Minute, "bound on one implementation's run of one scenario")
	flag.StringVar(&c.only, "only", "", "comma-separated scenario names to run (default all)")
	flag.StringVar(&c.postgres, "postgres", os.Getenv("ACEMQ_TEST_POSTGRES_URL"), "PostgreSQL URL for the PostgreSQL rows of the idempotent consumer and the outbox relay (default $ACEMQ_TEST_POSTGRES_URL; empty leaves them out)")
	flag.BoolVar(&c.noWatermill, "no-watermill", false, "leave Watermill out")
	flag.BoolVar(&c.noEnvelope, "no-raw-envelope", false, "leave out raw+envelope (raw amqp091-go sending AceMQ's headers)")
	flag.BoolVar(&c.noObservers, "no-observers", false, "leave out acemq+observers (AceMQ with the Prometheus and OpenTelemetry adapters)")
	flag.Float64Var(&c.traceRatio, "trace-ratio", 1, "share of the traces acemq+observers samples (1: every span; below 1, ParentBased(TraceIDRatioBased))")
	flag.BoolVar(&c.micro, "micro", true, "run the root package's Go benchmarks too")
	flag.BoolVar(&c.codecs, "codecs", true, "time each codec's Marshal and Unmarshal of one message too (in this process)")
	flag.BoolVar(&c.microOnly, "micro-only", false, "run no broker scenario, only the micro and codec benchmarks (-micro, -codecs): no broker needed")
	flag.StringVar(&c.benchtime, "benchtime", "", "go test -benchtime for the micro and codec benchmarks (default 1s, quick 2000x)")
	flag.StringVar(&c.out, "out", "results/latest.json", "where to write the JSON report")
	flag.StringVar(&c.root, "root", "..", "the acemq module's directory (for the micro benchmarks and the git commit)")
	flag.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the broker scenarios (all implementations) to this file")
	flag.StringVar(&c.trace, "trace", "", "write an execution trace of the broker scenarios to this file, each contender's run a region named \"scenario / contender\" (go run ./cmd/trace-wakeups FILE counts the goroutine wake-ups in each)")
	flag.Parse()
	flag.Visit(func(f *flag.Flag) {
		c.resized = c.resized || f.Name == "messages" || f.Name == "rung-messages" || f.Name == "kinds-messages" || f.Name == "requests" || f.Name == "rounds"
	})
	c.defaults()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, c, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "acemq-bench:", err)
		os.Exit(1)
	}
}

func (c *config) defaults() {
	pick := func(v *int, full, quick int) {
		if *v == 0 {
			*v = full
			if c.quick {
				*v = quick
			}
		}
	}
	pick(&c.messages, 10000, 1000)
	pick(&c.rungMessages, 2000, 300)
	pick(&c.kindMessages, 2000, 1000)
	pick(&c.requests, 2000, 500)
	pick(&c.rounds, 5, 3)
	if c.benchtime == "" {
		c.benchtime = "1s"
		if c.quick {
			c.benchtime = "2000x"
		}
	}
}

func run(ctx context.Context, c config, stdout, log io.Writer) error {
	if c.url == "" && !c.microOnly {
		return fmt.Errorf("no broker: set ACEMQ_TEST_URL or pass -url (or -micro-only)")
	}
	rep := report.Report{Started: time.Now(), Mode: "full", Machine: report.ThisMachine(), GitCommit: report.GitCommit(c.root), Notes: notes(c)}
	switch {
	case c.microOnly:
		rep.Mode, rep.Notes = "micro", nil
	case c.resized:
		rep.Mode = "custom"
	case c.quick:
		rep.Mode = "quick"
	}
	if !c.microOnly {
		if err := runScenarios(ctx, c, &rep, log); err != nil {
			return err
		}
	}

	if c.micro {
		fmt.Fprintln(log, "micro benchmarks in", c.root)
		var err error
		if rep.Micro, err = micro.Run(ctx, c.root, c.benchtime, log); err != nil {
			return err
		}
	}
	if c.codecs {
		fmt.Fprintln(log, "codec benchmarks")
		var err error
		if rep.Codecs, err = micro.RunCodecs(c.benchtime); err != nil {
			return err
		}
	}
	if err := rep.WriteJSON(c.out); err != nil {
		return err
	}
	if err := rep.WriteMarkdown(stdout); err != nil {
		return err
	}
	fmt.Fprintln(log, "wrote", filepath.Clean(c.out))
	for _, row := range rep.Rows {
		if len(row.Errors) > 0 {
			return fmt.Errorf("%s / %s failed", row.Scenario, row.Implementation)
		}
	}
	return nil
}

// runScenarios runs the broker scenarios -only names into rep.Rows.
func runScenarios(ctx context.Context, c config, rep *report.Report, log io.Writer) error {
	broker, err := harness.Dial(c.url)
	if err != nil {
		return err
	}
	defer broker.Close()
	rep.Broker = broker.Version()

	scenarios, err := only(c.only)
	if err != nil {
		return err
	}
	openLoop, err := openLoopOptions(c)
	if err != nil {
		return err
	}
	runner := harness.Runner{Broker: broker, Log: log, IdempotencyPostgres: c.postgres, Options: harness.Options{
		Messages: c.messages, RungMessages: c.rungMessages, KindMessages: c.kindMessages, Requests: c.requests, Rounds: c.rounds, Timeout: c.timeout, Only: scenarios, Quick: c.quick,
	}}
	if runner.Raw, err = harness.NewRaw(c.url); err != nil {
		return err
	}
	defer runner.Raw.Close()
	if !c.noEnvelope {
		if runner.RawEnvelope, err = harness.NewRawEnvelope(c.url); err != nil {
			return err
		}
		defer runner.RawEnvelope.Close()
	}
	if runner.RawRetry, err = harness.NewRawRetry(c.url); err != nil {
		return err
	}
	defer runner.RawRetry.Close()
	if runner.AceMQ, err = harness.NewAceMQ(ctx, c.url, "acemq"); err != nil {
		return err
	}
	defer runner.AceMQ.Close()
	if !c.noObservers {
		if c.traceRatio < 0 || c.traceRatio > 1 {
			return fmt.Errorf("-trace-ratio %v: want 0 to 1", c.traceRatio)
		}
		observer, stop, err := harness.Observers(c.traceRatio)
		if err != nil {
			return err
		}
		defer stop()
		if runner.AceMQObserved, err = harness.NewAceMQ(ctx, c.url, "acemq+observers", acemq.WithObserver(observer)); err != nil {
			return err
		}
		defer runner.AceMQObserved.Close()
	}
	// The rung kinds' own connection: its observer times the republishes to
	// the rungs, so the plain acemq contender stays without one.
	if scenarios == nil || scenarios[harness.RungKinds] {
		if runner.AceMQRungs, err = harness.NewAceMQClocked(ctx, c.url, "acemq rungs"); err != nil {
			return err
		}
		defer runner.AceMQRungs.Close()
	}
	if !c.noWatermill {
		if runner.Watermill, err = harness.NewWatermill(c.url); err != nil {
			return err
		}
		defer runner.Watermill.Close()
	}
	stopProfile, err := startProfile(c.cpuProfile, c.trace)
	if err != nil {
		return err
	}
	series := runner.Run(ctx)
	if scenarios == nil || scenarios[harness.OpenLoop] {
		series = append(series, runner.OpenLoop(ctx, openLoop)...)
		rep.Notes = append(rep.Notes, openLoopNote(openLoop))
	}
	if scenarios == nil || scenarios[harness.OutboxRelaySQLite] || scenarios[harness.OutboxRelayPostgres] {
		series = append(series, runOutbox(ctx, broker, c, log)...)
	}
	if err := stopProfile(); err != nil {
		return err
	}
	rep.Rows = report.Summarize(series, rowNotes)
	return nil
}

// startProfile starts a CPU profile into cpu and an execution trace into
// tr, each if asked for, and returns what stops them.
func startProfile(cpu, tr string) (stop func() error, err error) {
	var stops []func() error
	stop = func() error {
		var errs []error
		for _, s := range stops {
			errs = append(errs, s())
		}
		return errors.Join(errs...)
	}
	for _, p := range []struct {
		path         string
		start        func(io.Writer) error
		stopRecorder func()
	}{{cpu, pprof.StartCPUProfile, pprof.StopCPUProfile}, {tr, trace.Start, trace.Stop}} {
		if p.path == "" {
			continue
		}
		f, err := os.Create(p.path)
		if err != nil {
			return nil, errors.Join(err, stop())
		}
		if err := p.start(f); err != nil {
			f.Close()
			return nil, errors.Join(err, stop())
		}
		stops = append(stops, func() error {
			p.stopRecorder()
			return f.Close()
		})
	}
	return stop, nil
}

// only reads -only's list, refusing a name that is no scenario's (it would
// run nothing without a word). The names are comma-separated, and a name
// may hold a comma itself ("per-message TTL, one queue"): each entry is the
// longest scenario name the rest of the list starts with.
func only(list string) (map[string]bool, error) {
	if list == "" {
		return nil, nil
	}
	m := map[string]bool{}
	for rest := strings.TrimSpace(list); rest != ""; {
		name := ""
		for _, n := range harness.Scenarios {
			if (rest == n || strings.HasPrefix(rest, n+",")) && len(n) > len(name) {
				name = n
			}
		}
		if name == "" {
			bad, _, _ := strings.Cut(rest, ",")
			return nil, fmt.Errorf("-only: no scenario is named %q; the scenarios are %q", strings.TrimSpace(bad), harness.Scenarios)
		}
		m[name] = true
		rest = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(rest, name), ","))
	}
	return m, nil
}

// rowNotes explain where an implementation does something other than the
// others, keyed "scenario/implementation".
var rowNotes = map[string]string{
	harness.PublishConfirmed + "/watermill":                   "ConfirmDelivery: waits for each confirm before the next publish (window 1)",
	harness.ConsumeAck8 + "/watermill":                        "8 router handlers, each its own subscription with prefetch 100",
	harness.RetryInConsumer + "/raw":                          "NOT equivalent: nack+requeue, ack on redelivery, no 10ms wait",
	harness.RetryInConsumer + "/" + harness.RawRetryName:      "the baseline: holds 10ms on a timer, republishes with attempt 2 (confirmed), then acks",
	harness.RetryInConsumer + "/watermill":                    "Retry middleware: retried in-process on the same delivery, no republish",
	harness.RetryOnRung + "/acemq":                            "1s wait on the rung; lateness against failure time + 1s",
	harness.PerMessageTTL + "/raw":                            "alternating 5s/1s per-message TTL, dead-lettered: head-of-line blocking",
	harness.RungKinds + "/" + harness.AceMQContract:           "classic rung Q.retry.1s; lateness against the rung publish's confirm + 1s",
	harness.RungKinds + "/" + harness.AceMQAtLeastOnce:        "quorum rung Q.retry.quorum.1s, at-least-once dead-lettering; lateness against the confirm + 1s",
	harness.RungKinds + "/" + harness.RawClassicTTL:           "publish into a classic x-message-ttl 1s queue dead-lettering to the consumed quorum queue",
	harness.RungKinds + "/" + harness.RawQuorumTTL:            "the same into a quorum TTL queue, at-least-once dead-lettering, reject-publish",
	harness.RungKinds + "/" + harness.RawRetryClassicTTL:      "consumes the quorum queue as acemq does, republishes attempt 2 (confirmed) to a classic TTL queue, acks",
	harness.RungKinds + "/" + harness.RawRetryQuorumTTL:       "the same to a quorum TTL queue (at-least-once dead-lettering): acemq at-least-once's baseline",
	harness.RequestReply1 + "/" + harness.RawReplyQueue:       "late = round trip; an exclusive server-named reply queue, acked; bare messages",
	harness.RequestReply1 + "/" + harness.RawDirectReplyTo:    "late = round trip; amq.rabbitmq.reply-to, no-ack, on the publishing channel; bare messages",
	harness.RequestReply1 + "/" + harness.AceMQRequest:        "late = round trip; request.Do on one Client (its acemq-reply-<uuid> queue), request.Serve",
	harness.RequestReply8 + "/" + harness.RawReplyQueue:       "late = round trip; 8 requesters on one channel, 8 responder goroutines",
	harness.RequestReply8 + "/" + harness.RawDirectReplyTo:    "late = round trip; 8 requesters on one channel, 8 responder goroutines",
	harness.RequestReply8 + "/" + harness.AceMQRequest:        "late = round trip; 8 goroutines on one Client, Serve WithConcurrency(8)",
	harness.IdempotentConsume + "/" + harness.IdemPlain:       "the plain consumer, the baseline of this scenario's ratios",
	harness.IdempotentConsume + "/" + harness.IdemMemory:      "idempotency.Handler on idempotency.NewMemory: a claim and a confirm in the process",
	harness.IdempotentConsume + "/" + harness.RawIdemSQLite:   "amqp091-go claiming and confirming each message in the same SQLite table with plain SQL, a statement each (the fair raw equivalent)",
	harness.IdempotentConsume + "/" + harness.IdemSQLite:      "idempotency.Handler on a SQLite file (WAL): a claim and a confirm per message, grouped with the other handlers' (group commit)",
	harness.IdempotentConsume + "/" + harness.TxSQLite:        "sqlstore.TxHandler on SQLite: claim, then a transaction inserting a row of work and confirming",
	harness.IdempotentConsume + "/" + harness.RawIdemPostgres: "amqp091-go claiming and confirming each message in the same PostgreSQL table with plain SQL, a statement each",
	harness.IdempotentConsume + "/" + harness.IdemPostgres:    "idempotency.Handler on PostgreSQL (pgx, local server): a claim and a confirm per message",
	harness.IdempotentConsume + "/" + harness.TxPostgres:      "sqlstore.TxHandler on PostgreSQL: claim, then a transaction inserting a row of work and confirming",
	harness.DelayedSend1s + "/acemq":                          "schedule.PublishIn(1s), 8 publishers; the 1s rung, then the forwarder delivers; late = arrival - due (negative: early)",
	harness.DelayedSend1sPaced200 + "/acemq":                  "the same, offered at 200/s to a plan open loop (a goroutine per send, its lag logged, flagged past 100ms p99); late = arrival - (send + 1s)",
	harness.DelayedSend1sPaced1000 + "/acemq":                 "the same at 1000/s",
	harness.DelayedSend90s + "/acemq":                         "PublishIn(90s): the 1m rung, then three 10s ones; at most 2 rounds; not in -quick",
	harness.DelayedSend1h + "/acemq":                          "PublishIn(1h) on memory:// with a manual clock moved 1s at a time: lateness on that clock",

	// Request-reply's baseline (acemq's ratio is to it) and direct reply-to
	// with AceMQ's headers.
	harness.RequestReply1 + "/" + harness.RawEnvelopeReplyQueue:    "late = round trip; raw reply queue sending and reading AceMQ's headers (envelope, acemq-reply-to, acemq-error): the baseline",
	harness.RequestReply1 + "/" + harness.RawEnvelopeDirectReplyTo: "late = round trip; raw+envelope on amq.rabbitmq.reply-to (no-ack, the publishing channel), without the acemq-reply-to header",
	harness.RequestReply8 + "/" + harness.RawEnvelopeReplyQueue:    "late = round trip; 8 requesters on one channel, 8 responder goroutines; AceMQ's headers: the baseline",
	harness.RequestReply8 + "/" + harness.RawEnvelopeDirectReplyTo: "late = round trip; 8 requesters on one channel, 8 responder goroutines; raw+envelope on amq.rabbitmq.reply-to",
}

func notes(c config) []string {
	return []string{
		fmt.Sprintf("every figure is the median of %d alternating rounds (raw, acemq, watermill, raw, ...), with the slowest..fastest round; × raw divides each round by raw's run in the same round", c.rounds),
		"messages: 256-byte JSON, persistent, on a fresh durable classic queue per run (quorum for the rung kinds); consume scenarios start from a preloaded queue (not timed)",
		fmt.Sprintf("publish-confirmed: acemq PublishBatch (window %d, the default), raw deferred confirms with the same window, watermill one Publish call with ConfirmDelivery (one confirm at a time)", acemq.DefaultBatchWindow),
		"consume-ack: prefetch 100; acemq Consume with WithConcurrency(n); raw Qos(100) with n goroutines on one deliveries channel; watermill a router with n handlers, each its own subscription with prefetch 100",
		"retry-in-consumer: acemq Fixed(2, 10ms) holds, republishes, acks; watermill Retry middleware (MaxRetries 1, 10ms) reruns the handler on the same delivery; raw nack+requeue without a wait (not equivalent); raw+retry, acemq's baseline, does what acemq does by hand (a timer, a republish with the envelope's headers and attempt 2 on a confirm-mode channel, its deferred confirm awaited, then the ack)",
		"retry-on-rung: acemq Fixed(2, 1s).WaitInBrokerFrom(1s), concurrency 8; lateness = second delivery - (first handler's return + 1s), so it includes the republish; per-message TTL: same broker, one queue, alternating 5s and 1s expirations",
		"the Watermill subscriber and router are started inside the timing, as acemq's Consume is",
		fmt.Sprintf("acemq+observers: acemqprom on a registry of its own and acemqotel, its spans sampled at ratio %v (1: every span; else ParentBased(TraceIDRatioBased)) into a batching processor whose exporter drops them", c.traceRatio),
		fmt.Sprintf("%s: a quorum source queue; acemq Fixed(2, 1s).WaitInBrokerFrom(1s), prefetch 100, concurrency 8, with contract (classic) or at-least-once (quorum) rungs; raw publishes into a 1s TTL queue of the same arguments that dead-letters to the quorum queue it consumes; msgs/s is the whole round trip, lateness = arrival - (the confirm of the publish to the rung + 1s); the raw+retry rows consume the preloaded quorum queue as acemq does (8 goroutines) and republish each first attempt with attempt 2 to the TTL queue, confirmed, then ack; acemq's rows are compared with raw+retry's of their kind, the other at-least-once (quorum) rows with the classic run of their own kind of client in the same round", harness.RungKinds),
		fmt.Sprintf("%s and %s: %d round trips of a 256-byte JSON payload echoed back, on a fresh durable classic request queue; requester and responder share the contender's one connection, each with its own channel, started inside the timing; both sides publish mandatory, persistent and confirmed, and the responder acks a request once its reply is confirmed (prefetch 100); the late columns are each round trip's time (publish to decoded reply), and × is to the raw+envelope reply-queue run of the same round (raw amqp091-go sending and reading the headers AceMQ's client and responder send: the envelope, acemq-reply-to, a UUID correlation id, acemq-error); raw reply queue and raw direct reply-to send bare messages", harness.RequestReply1, harness.RequestReply8, c.requests),
		fmt.Sprintf("%s: %d messages of 100 keys published (confirmed, pipelined) to a direct exchange and 8 quorum queues with single active consumer while 4 consumers take 2 partitions each, one message at a time, prefetch 100; every message checked to follow its key's last; timed from the consumers' start to the last message; acemq package partition (Consume, PublishBatch), raw the same topology in amqp091-go with a goroutine per queue", harness.Ordered, c.messages),
	}
}

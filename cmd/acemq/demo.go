package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/actuator"
	"github.com/acemq-go/acemq/contract"
)

// The demo's names. It purges its own queues at the start, so that its
// counts are its own.
const (
	demoExchange = "acemq.demo"
	demoQueue    = "acemq.demo.orders"
)

// demoPolicy waits 500ms in the consumer, then 1s and 2s on rungs.
var demoPolicy = acemq.Exponential(4, 500*time.Millisecond, 2*time.Second).WaitInBrokerFrom(time.Second)

type demoOrder struct {
	ID    int     `json:"id"`
	Total float64 `json:"total"`
}

// demoSummary is the demo's final count (and its --json output), in the
// words of Stats and the contract's outcomes.
type demoSummary struct {
	Published         int64 `json:"published"`
	Accepted          int64 `json:"accepted"`
	RetriedInConsumer int64 `json:"retriedInConsumer"`
	RetriedOnRung     int64 `json:"retriedOnRung"`
	DeadLettered      int64 `json:"deadLettered"`
	Parked            int64 `json:"parked"`
	Lost              int64 `json:"lost"`
}

type demoOptions struct {
	url         string
	rungs       contract.RungKind
	messages    int
	timeout     time.Duration
	json        bool
	metricsAddr string
	tls         tlsFlags
}

func newDemoCmd() *cobra.Command {
	var (
		o     demoOptions
		rungs string
	)
	cmd := &cobra.Command{
		Use:   "demo [--url URL] [--messages N] [--rungs KIND] [--json] [--metrics-addr ADDR]",
		Short: "Publish orders to a flaky handler and account for every one",
		Long: `demo publishes a stream of orders to a handler that accepts most, fails some
for a while, fails some for good and cannot read some (they are not JSON).
The retry policy ` + demoPolicy.String() + ` waits 500ms in the
consumer, then 1s and 2s on rungs of the retry ladder: at-least-once rungs
(quorum queues) by default, the contract's classic ones with --rungs
contract. It prints a live
summary, then the final count: every published order accepted, dead-lettered
or parked, and lost, which must be 0.

It runs on the in-process broker memory://acemq-demo unless --url names a
RabbitMQ broker. The demo declares exchange ` + demoExchange + ` and queue ` + demoQueue + `
with its dead-letter queues and rungs, and purges them first.

With --metrics-addr it serves the actuator (package actuator) while it runs:
its Prometheus metrics (package acemqprom) at /acemq-metrics, the health at
/acemq-health, the library's info at /acemq-info, and the connection's
liveness and readiness at /livez and /readyz. It prints where (on stderr
with --json), and the message counts as a scrape shows them at the end.
The family's address is ` + contract.DefaultActuatorAddress + `.`,
		Args:                  cobra.NoArgs,
		DisableFlagsInUseLine: true,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			if o.messages < 1 {
				return fmt.Errorf("--messages is %d but must be at least 1", o.messages)
			}
			kind, err := contract.ParseRungKind(rungs)
			if err != nil {
				return fmt.Errorf("--rungs: %w", err)
			}
			o.rungs = kind
			return nil
		}, func(cmd *cobra.Command, _ []string) error {
			summary, err := runDemo(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), o)
			if err != nil {
				return err
			}
			if o.json {
				if err := writeJSON(cmd.OutOrStdout(), summary); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "final: %s\n\n%s", summary, summary.explain(demoLadder(o.rungs)))
			}
			if summary.Lost != 0 {
				return fmt.Errorf("%d orders are not accounted for", summary.Lost)
			}
			return nil
		}),
	}
	cmd.Flags().StringVar(&o.url, "url", "memory://acemq-demo", "the broker: an AMQP `URL` such as amqp://guest:guest@localhost:5672/, or memory://NAME")
	cmd.Flags().IntVar(&o.messages, "messages", 100, "how many orders to publish")
	cmd.Flags().StringVar(&rungs, "rungs", string(contract.AtLeastOnceRungs), "the `KIND` of rungs: at-least-once or contract")
	cmd.Flags().DurationVar(&o.timeout, "timeout", time.Minute, "how long to wait for every order to be settled")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the final summary as JSON")
	cmd.Flags().StringVar(&o.metricsAddr, "metrics-addr", "", "serve the actuator (metrics, health, info) over HTTP at `ADDR` (such as "+contract.DefaultActuatorAddress+") while the demo runs")
	o.tls.addFlags(cmd)
	return cmd
}

func (s demoSummary) String() string {
	return fmt.Sprintf("published %d, accepted %d, retried in consumer %d, retried on rungs %d, dead-lettered %d, parked %d, lost %d",
		s.Published, s.Accepted, s.RetriedInConsumer, s.RetriedOnRung, s.DeadLettered, s.Parked, s.Lost)
}

// progress is the live line: what is not settled yet is in flight, not lost.
func (s demoSummary) progress(waiting int64) string {
	return fmt.Sprintf("published %d, accepted %d, retried in consumer %d, retried on rungs %d, dead-lettered %d, parked %d, in flight %d (%d waiting in the consumer)",
		s.Published, s.Accepted, s.RetriedInConsumer, s.RetriedOnRung, s.DeadLettered, s.Parked, s.Lost, waiting)
}

// demoLadder is the demo queue's ladder with rungs of kind (a valid one).
func demoLadder(kind contract.RungKind) acemq.Ladder {
	ladder, err := demoPolicy.Ladder(demoQueue, kind)
	if err != nil {
		panic(err) // the demo's own policy and a parsed kind
	}
	return ladder
}

// explain says what the user just saw, from the counts.
func (s demoSummary) explain(ladder acemq.Ladder) string {
	rungs := ladder.Queues()
	return fmt.Sprintf(`What happened, with the policy %s:
- Orders ending in 0 to 5 were accepted at once.
- Orders ending in 6 failed once: the consumer held each for about 500ms
  (below the 1s threshold, so the wait is the consumer's) and retried it.
- Orders ending in 7 failed twice: 500ms in the consumer, then 1s in the rung
  %s, a queue whose time-to-live is the wait, from which the
  broker routed them home through acemq.retry. A consumer that crashed then
  would not have cut that wait short.
- Orders ending in 8 always failed: 500ms in the consumer, 1s and 2s in the rungs
  %s, then, with their 4 attempts used, they went to
  %s with x-acemq-error "exhausted 4 attempts: ...".
- Orders ending in 9 were not JSON: the handler never saw them; they were
  parked in %s.
In all: %d retries in the consumer, %d on rungs, %d accepted, %d dead-lettered,
%d parked, of %d published. Lost: %d.
`, demoPolicy, rungs[0], strings.Join(rungs, " and "), contract.DeadLetterQueue(demoQueue), contract.ParkedQueue(demoQueue),
		s.RetriedInConsumer, s.RetriedOnRung, s.Accepted, s.DeadLettered, s.Parked, s.Published, s.Lost)
}

// flakyHandler accepts 6 orders in 10, fails 2 for one or two attempts, 1
// for good; the tenth is not JSON and never reaches it.
func flakyHandler(_ context.Context, m acemq.Message[demoOrder]) acemq.Decision {
	switch m.Body.ID % 10 {
	case 6:
		if m.Envelope.Attempt < 2 {
			return acemq.Retry(errors.New("payment service busy"))
		}
	case 7:
		if m.Envelope.Attempt < 3 {
			return acemq.Retry(errors.New("warehouse timed out"))
		}
	case 8:
		return acemq.Retry(errors.New("card declined, again"))
	}
	return acemq.Accept()
}

// rawJSON claims to be JSON whatever it carries: the demo's undecodable orders.
type rawJSON struct{ acemq.Codec }

func (rawJSON) ContentType() string { return contract.ContentTypeJSON }

func runDemo(ctx context.Context, out, errOut io.Writer, o demoOptions) (demoSummary, error) {
	var opts []acemq.ConnOption
	var metrics *demoMetrics
	if o.metricsAddr != "" {
		var err error
		if metrics, err = newDemoMetrics(o.metricsAddr); err != nil {
			return demoSummary{}, err
		}
		defer metrics.stop()
		opts = append(opts, acemq.WithObserver(metrics.observer))
	}
	conn, err := o.tls.connect(ctx, o.url, "acemq demo", opts...)
	if err != nil {
		return demoSummary{}, err
	}
	defer conn.Close()
	if metrics != nil {
		if err := metrics.serve(conn); err != nil {
			return demoSummary{}, err
		}
		// With --json, stdout is the summary alone: say where on stderr.
		where := out
		if o.json {
			where = errOut
		}
		fmt.Fprintf(where, "actuator: %s (%s, %s, %s, %s, %s) while the demo runs\n", metrics.URL(),
			contract.ActuatorMetricsPath, contract.ActuatorHealthPath, contract.ActuatorInfoPath, actuator.LivenessPath, actuator.ReadinessPath)
	}
	topology := acemq.Topology{
		Exchanges: []acemq.ExchangeSpec{{Name: demoExchange, Type: "topic"}},
		Queues: []acemq.QueueSpec{{Name: demoQueue, DeadLetter: true, Retry: &demoPolicy, Rungs: o.rungs,
			Bindings: []acemq.BindingSpec{{Exchange: demoExchange, RoutingKey: "order.*"}}}},
	}
	if err := topology.Apply(ctx, conn); err != nil {
		return demoSummary{}, err
	}
	for _, q := range append([]string{demoQueue, contract.DeadLetterQueue(demoQueue), contract.ParkedQueue(demoQueue)}, demoLadder(o.rungs).Queues()...) {
		if _, err := conn.PurgeQueue(ctx, q); err != nil {
			return demoSummary{}, err
		}
	}

	consumer, err := acemq.Consume(ctx, conn, demoQueue, flakyHandler,
		acemq.WithPolicy(demoPolicy), acemq.WithRungs(o.rungs), acemq.WithConcurrency(4), acemq.WithPrefetch(50))
	if err != nil {
		return demoSummary{}, err
	}
	defer consumer.Close(context.Background())

	published, err := publishDemoOrders(ctx, conn, o.messages)
	var summary demoSummary
	report := func() demoSummary {
		s := consumer.Stats()
		summary = demoSummary{Published: published, Accepted: s.Accepted, RetriedInConsumer: s.RetriedInConsumer,
			RetriedOnRung: s.RetriedOnRung, DeadLettered: s.DeadLettered, Parked: s.Parked}
		summary.Lost = summary.Published - summary.Accepted - summary.DeadLettered - summary.Parked
		return summary
	}
	if err != nil {
		return report(), err
	}
	deadline := time.NewTimer(o.timeout)
	defer deadline.Stop()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for report().Lost > 0 {
		select {
		case <-tick.C:
			if !o.json {
				fmt.Fprintf(out, "%s\n", summary.progress(consumer.Stats().Waiting))
			}
		case <-deadline.C:
			return summary, fmt.Errorf("%d orders not settled within %s: %s", summary.Lost, o.timeout, summary)
		case <-ctx.Done():
			return summary, ctx.Err()
		}
	}
	if metrics != nil && !o.json {
		fmt.Fprintf(out, "\nas %s shows them at the end:\n", metrics.URL()+contract.ActuatorMetricsPath)
		if err := metrics.write(out, contract.MetricPublishTotal, contract.MetricRepublishTotal, contract.MetricConsumeTotal, contract.MetricMessagesRetried); err != nil {
			return summary, err
		}
	}
	return summary, nil
}

// publishDemoOrders publishes n orders, every tenth one not JSON, and says
// how many the broker confirmed.
func publishDemoOrders(ctx context.Context, conn *acemq.Conn, n int) (int64, error) {
	orders, err := acemq.NewPublisher[demoOrder](conn, demoExchange, acemq.WithOrigin("acemq-demo"))
	if err != nil {
		return 0, err
	}
	garbled, err := acemq.NewPublisher[[]byte](conn, demoExchange, acemq.WithOrigin("acemq-demo"), acemq.WithCodec(rawJSON{acemq.Bytes}))
	if err != nil {
		return 0, err
	}
	var batch []acemq.Outgoing[demoOrder]
	var published int64
	for id := range n {
		if id%10 == 9 {
			if err := garbled.Publish(ctx, "order.new", []byte(fmt.Sprintf("order %d, not JSON {", id))); err != nil {
				return published, err
			}
			published++
			continue
		}
		batch = append(batch, acemq.Outgoing[demoOrder]{RoutingKey: "order.new", Body: demoOrder{ID: id, Total: float64(id) * 1.5}})
	}
	err = orders.PublishBatch(ctx, batch)
	published += int64(len(batch))
	if be, ok := errors.AsType[*acemq.BatchError](err); ok {
		published -= int64(len(be.Failed))
	}
	return published, err
}

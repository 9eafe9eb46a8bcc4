package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

type ladderOptions struct {
	queue     string
	policy    string
	threshold *time.Duration // nil: the policy's own
	rungs     contract.RungKind
	attempt   int           // 0: no decision asked for
	age       time.Duration // acemq.UnknownAge when not given
	json      bool
}

func newLadderCmd() *cobra.Command {
	var (
		o         ladderOptions
		threshold time.Duration
		rungs     string
	)
	cmd := &cobra.Command{
		Use:   "ladder QUEUE --policy NOTATION [--threshold D] [--rungs KIND] [--attempt N [--age D]] [--json]",
		Short: "Show the retry ladder a policy gives a queue",
		Long: `ladder shows what a retry policy does to the messages of QUEUE: the wait
before each retry and whether the consumer or a rung (a broker queue) holds
it, the rungs with their arguments, and everything a consumer of QUEUE
declares, in order. With --attempt it also shows the decision for a failure
at that attempt, of a message --age old (without --age the age is unknown,
which counts as young enough).

--rungs chooses the kind of rungs: at-least-once (the default), this
library's quorum queues Q.retry.quorum.<delay>, which keep each message until
its queue has it through a broker restart or a failover, or contract, the
classic queues Q.retry.<delay> every AceMQ library declares, which drop a
message due home while the queue has no leader.

The policy is written in the notation every AceMQ library reads:
  none()
  fixed(4, 30s)
  exponential(5, 1s, 24h).giveUpAfter(2m).withJitter(0.1).waitInBrokerFrom(1m)`,
		Example: `  acemq ladder orders.new --policy 'exponential(6, 10s, 5m)'
  acemq ladder orders.new --policy 'exponential(6, 10s, 5m)' --attempt 3
  acemq ladder orders.new --policy 'exponential(6, 10s, 5m)' --rungs contract
  acemq ladder orders.new --policy 'fixed(4, 30s).giveUpAfter(2m)' --attempt 2 --age 3m --json`,
		Args:                  exactArgs("QUEUE"),
		DisableFlagsInUseLine: true,
		RunE: runE(
			func(cmd *cobra.Command, args []string) error {
				flags := cmd.Flags()
				o.queue = args[0]
				if flags.Changed("threshold") {
					o.threshold = &threshold
				}
				kind, err := contract.ParseRungKind(rungs)
				if err != nil {
					return fmt.Errorf("--rungs: %w", err)
				}
				o.rungs = kind
				switch {
				case flags.Changed("attempt") && o.attempt < 1:
					return fmt.Errorf("--attempt is %d but counts from 1 (the first delivery)", o.attempt)
				case flags.Changed("age") && !flags.Changed("attempt"):
					return errors.New("--age needs --attempt: it is the age of the message whose attempt failed")
				case flags.Changed("age") && o.age < 0:
					return fmt.Errorf("--age is %s but must be at least 0", contract.FormatDuration(o.age))
				case !flags.Changed("age"):
					o.age = acemq.UnknownAge
				}
				return nil
			},
			func(cmd *cobra.Command, _ []string) error { return runLadder(cmd.OutOrStdout(), o) }),
	}
	flags := cmd.Flags()
	flags.StringVar(&o.policy, "policy", "", "the retry policy's `NOTATION`, such as 'exponential(6, 10s, 5m)'")
	flags.DurationVar(&threshold, "threshold", 0,
		"waits at least this long are the broker's, 0 none; overrides the policy's waitInBrokerFrom (default 30s)")
	flags.StringVar(&rungs, "rungs", string(contract.DefaultRungKind), "the `KIND` of rungs: at-least-once or contract")
	flags.IntVar(&o.attempt, "attempt", 0, "show the decision for a failure at attempt `N` (1 is the first delivery)")
	flags.DurationVar(&o.age, "age", 0, "with --attempt, the age of the message (default unknown)")
	flags.BoolVar(&o.json, "json", false, "print JSON")
	_ = cmd.MarkFlagRequired("policy")
	return cmd
}

func runLadder(w io.Writer, o ladderOptions) error {
	policy, err := acemq.ParsePolicy(o.policy)
	if err != nil {
		return err
	}
	if o.threshold != nil {
		policy = policy.WaitInBrokerFrom(*o.threshold)
	}
	ladder, err := policy.Ladder(o.queue, o.rungs)
	if err != nil {
		return err
	}
	var decision *acemq.RetryDecision
	if o.attempt > 0 {
		d := policy.Decide(o.attempt, o.age)
		decision = &d
	}
	if o.json {
		return writeJSON(w, newLadderReport(policy, ladder, decision))
	}
	return writeLadder(w, policy, ladder, decision, o.age)
}

// ladderReport is the JSON of acemq ladder.
type ladderReport struct {
	Source          string              `json:"source"`
	Policy          string              `json:"policy"`
	ThresholdMillis int64               `json:"thresholdMillis"`
	ScheduleMillis  []int64             `json:"scheduleMillis"`
	RungKind        contract.RungKind   `json:"rungKind"`
	Rungs           []rungReport        `json:"rungs"`
	Declarations    []acemq.Declaration `json:"declarations"`
	Warnings        []string            `json:"warnings"`
	Decision        *decisionReport     `json:"decision,omitempty"`
}

type rungReport struct {
	Queue       string      `json:"queue"`
	DelayMillis int64       `json:"delayMillis"`
	Arguments   acemq.Table `json:"arguments"`
}

type decisionReport struct {
	Attempt     int                  `json:"attempt"`
	Outcome     contract.Outcome     `json:"outcome"`
	ReasonClass contract.ReasonClass `json:"reasonClass"`
	Retries     bool                 `json:"retries"`
	// DelayMillis (the scheduled wait), the range the message really waits
	// in, WaitsIn and Rung are there only when the message is retried (a
	// retry may be scheduled to wait 0ms); Reason only when it is given up.
	DelayMillis   *int64   `json:"delayMillis,omitempty"`
	MinWaitMillis *float64 `json:"minWaitMillis,omitempty"`
	MaxWaitMillis *float64 `json:"maxWaitMillis,omitempty"`
	WaitsIn       string   `json:"waitsIn,omitempty"`
	Rung          string   `json:"rung,omitempty"`
	Reason        string   `json:"reason,omitempty"`
}

func newLadderReport(p acemq.RetryPolicy, l acemq.Ladder, decision *acemq.RetryDecision) ladderReport {
	r := ladderReport{
		Source:          l.Source(),
		Policy:          p.String(),
		ThresholdMillis: p.BrokerWaitThreshold().Milliseconds(),
		ScheduleMillis:  []int64{},
		RungKind:        l.Kind(),
		Rungs:           []rungReport{},
		Declarations:    l.Declarations(),
		Warnings:        append([]string{}, p.Warnings()...),
	}
	for _, d := range p.Schedule() {
		r.ScheduleMillis = append(r.ScheduleMillis, d.Milliseconds())
	}
	for _, rung := range l.Rungs() {
		r.Rungs = append(r.Rungs, rungReport{Queue: rung.Queue, DelayMillis: rung.Delay.Milliseconds(), Arguments: rung.Arguments})
	}
	if decision != nil {
		d := &decisionReport{Attempt: decision.Attempt, Outcome: decision.Outcome, ReasonClass: decision.Class, Retries: !decision.GivesUp()}
		if decision.GivesUp() {
			d.Reason = decision.Reason
		} else {
			ms := decision.Delay.Milliseconds()
			lo, hi := l.WaitRange(decision.Delay)
			minMs, maxMs := millis(lo), millis(hi)
			d.DelayMillis, d.MinWaitMillis, d.MaxWaitMillis = &ms, &minMs, &maxMs
			d.WaitsIn = "consumer"
			if decision.Outcome == contract.RetriedOnRung {
				d.WaitsIn = "rung"
				if rung, ok := l.RungFor(decision.Delay); ok {
					d.Rung = rung.Queue
				}
			}
		}
		r.Decision = d
	}
	return r
}

// writeLadder is the human output of acemq ladder.
func writeLadder(w io.Writer, p acemq.RetryPolicy, l acemq.Ladder, decision *acemq.RetryDecision, age time.Duration) error {
	var b strings.Builder
	fmt.Fprintf(&b, "queue:     %s\n", l.Source())
	fmt.Fprintf(&b, "policy:    %s\n", p)
	if t := p.BrokerWaitThreshold(); t > 0 {
		fmt.Fprintf(&b, "threshold: %s (waits of %s or more are the broker's)\n", contract.FormatDuration(t), contract.FormatDuration(t))
	} else {
		b.WriteString("threshold: 0 (every wait is the consumer's)\n")
	}

	b.WriteString("\nschedule:\n")
	schedule := p.Schedule()
	if len(schedule) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  attempt\twait\twaits in")
		for i, d := range schedule {
			fmt.Fprintf(tw, "  %d\t%s\t%s\n", i+1, contract.FormatDuration(d), waitsIn(l, d))
		}
		_ = tw.Flush()
	}
	fmt.Fprintf(&b, "  attempt %d: gives up (exhausted)\n", p.MaxAttempts())
	if age := p.MaxMessageAge(); age > 0 {
		fmt.Fprintf(&b, "  any attempt: gives up once the message is %s old\n", contract.FormatDuration(age))
	}

	b.WriteString("\nrungs:")
	if len(l.Rungs()) == 0 {
		b.WriteString(" none; every wait is the consumer's\n")
	} else {
		fmt.Fprintf(&b, " %s\n", rungKindText[l.Kind()])
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for _, r := range l.Rungs() {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", r.Queue, contract.FormatDuration(r.Delay), transport.FormatTable(r.Arguments))
		}
		_ = tw.Flush()
	}

	b.WriteString("\ndeclarations:\n")
	writeNumbered(&b, l.Declarations())

	if warnings := p.Warnings(); len(warnings) > 0 {
		b.WriteString("\n")
		for _, warning := range warnings {
			fmt.Fprintf(&b, "warning: %s\n", warning)
		}
	}

	if decision != nil {
		ageText := "age unknown"
		if age >= 0 {
			ageText = "age " + contract.FormatDuration(age)
		}
		fmt.Fprintf(&b, "\ndecision for a failure at attempt %d (%s):\n", decision.Attempt, ageText)
		fmt.Fprintf(&b, "  outcome: %s (%s)\n", decision.Outcome, decision.Class)
		if decision.GivesUp() {
			fmt.Fprintf(&b, "  reason:  %s\n", decision.Reason)
		} else {
			fmt.Fprintf(&b, "  delay:   %s (scheduled)\n", contract.FormatDuration(decision.Delay))
			fmt.Fprintf(&b, "  waits:   %s\n", waitText(p, l, decision.Delay))
			if rung, ok := l.RungFor(decision.Delay); ok {
				fmt.Fprintf(&b, "  rung:    %s\n", rung.Queue)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// rungKindText says what each kind of rungs is, for the rungs heading.
var rungKindText = map[contract.RungKind]string{
	contract.ContractRungs:    "contract (classic queues, as every AceMQ library declares them; dead-lettered home at most once)",
	contract.AtLeastOnceRungs: "at-least-once (quorum queues of this library; dead-lettered home at least once)",
}

// waitsIn says who holds a wait of d: "consumer", or the rung's name.
func waitsIn(l acemq.Ladder, d time.Duration) string {
	if rung, ok := l.RungFor(d); ok {
		return rung.Queue
	}
	return "consumer"
}

// waitText says how long a retry scheduled to wait d waits, and why in
// that range.
func waitText(p acemq.RetryPolicy, l acemq.Ladder, d time.Duration) string {
	lo, hi := l.WaitRange(d)
	if _, ok := l.RungFor(d); ok {
		return contract.FormatDuration(lo) + " (the rung's TTL: exact)"
	}
	var notes []string
	if f := p.JitterFactor(); f > 0 {
		notes = append(notes, "jittered ±"+strconv.FormatFloat(f*100, 'g', -1, 64)+"%")
	} else {
		notes = append(notes, "no jitter")
	}
	if lo == contract.MinConsumerWait {
		notes = append(notes, "never below "+contract.FormatDuration(contract.MinConsumerWait))
	}
	text := contract.FormatDuration(lo)
	if hi != lo {
		text += " to " + contract.FormatDuration(hi)
	}
	return text + " (" + strings.Join(notes, ", ") + ")"
}

// millis is d in milliseconds, fractions included: a jittered wait is not
// a whole number of them.
func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// writeNumbered writes declarations one a line, numbered from 1.
func writeNumbered(w io.Writer, ds []acemq.Declaration) {
	width := len(fmt.Sprint(len(ds)))
	for i, d := range ds {
		fmt.Fprintf(w, "  %*d. %s\n", width, i+1, d)
	}
}

// Package chaos is a harness that checks the library's promise that a message
// never disappears quietly. It publishes a stream of numbered, confirmed
// messages into a durable queue consumed by a separate consumer process
// (./consumer) with a retry policy, injects faults while the load flows
// (SIGKILL of the consumer process, connections force-closed by the broker,
// the broker node stopped and started again, a memory alarm, the cluster node
// hosting a quorum queue's leader killed),
// waits until every confirmed message is settled, and then accounts for each
// one: accepted, in Q.dlq, in Q.parked, or still queued. Whatever is in none
// of those is lost; whatever is in a place its number does not send it to is
// misplaced. Messages handled more than once are counted, never a failure.
//
// By number n: n%10 in 0..7 must end accepted (6 after one retry in the
// consumer, 7 after a further one on a rung), 8 in Q.dlq (every attempt
// fails), 9 in Q.parked (published as a body that is not JSON).
package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/retry"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/rabbitmq"
)

// Policy is the consumer process's default retry policy: a 500ms wait in the
// consumer, then 1s and 2s waits on rungs, then Q.dlq.
const Policy = "exponential(4, 500ms, 2s).waitInBrokerFrom(1s)"

// RungPolicy is the policy of the runs that compare the two kinds of rungs
// (restart, and failover with the ladder): the one an independent tester
// measured the restart loss with. A 500ms wait in the consumer, then waits
// of 1s, 2s and 2s on the rungs Q.retry.1s and Q.retry.2s (or
// Q.retry.quorum.1s and .2s), then Q.dlq: a 7 makes one rung hop, an 8
// three.
const RungPolicy = "exponential(5, 500ms, 2s).waitInBrokerFrom(1s)"

// RungRate is the rate of those runs, the tester's (messages a second).
const RungRate = 110

// Scenarios.
const (
	// Kill SIGKILLs the consumer process at random moments and restarts it.
	Kill = "kill"
	// Close force-closes the harness's and the consumer's connections.
	Close = "close"
	// Restart stops the broker node cleanly and starts it again (same data
	// directory) through Config.RestartBroker; the harness's publisher and
	// the consumer process must recover by themselves.
	Restart = "restart"
	// Alarm raises a memory or disk alarm through Config.Alarm, checks that the
	// harness's Conn reports itself blocked and that a publish with a
	// deadline fails with ErrBlocked, holds the alarm for a while, then
	// clears it; publishing and consuming must resume by themselves.
	Alarm = "alarm"
	// Failover SIGKILLs the cluster node hosting the quorum source queue's
	// leader through Config.KillLeader, waits for the publisher and the
	// consumer to carry on through the other nodes (Config.Fallbacks), then
	// starts the node again through Config.RestartNode.
	Failover = "failover"
	// Partition cuts the network between the cluster's nodes through
	// Config.Cut (partition.go), holds the cut while the load flows, and
	// heals it; the publisher and the consumer fall back to the nodes they
	// still reach (Config.Fallbacks).
	Partition = "partition"
)

// Config is one run of the harness.
type Config struct {
	URL string
	// Fallbacks are the cluster's other nodes, for the harness's and the
	// consumer's connections (acemq.WithFallbackURLs).
	Fallbacks []string
	Queue     string // declared by the run (durable), deleted after it
	// QueueType is the source queue's type (default classic).
	QueueType transport.QueueType
	// Policy is the consumer's retry policy (default Policy). The handler
	// fails by number as the package comment says whatever it is.
	Policy string
	// Rungs is the kind of the ladder's rungs; none means the consumer
	// picks no kind (no acemq.WithRungs), as a service on the library's
	// defaults, and gets contract.DefaultRungKind.
	Rungs    contract.RungKind
	Scenario string // Kill, Close, Restart, Alarm, Failover or Partition
	Faults   int    // how many faults to inject
	// Rate is how many messages are published per second while faults are
	// injected (default 300).
	Rate int
	// Gap is the longest random pause between one fault's recovery and the
	// next fault (default 2s; the shortest is a tenth of it).
	Gap time.Duration
	// ConsumerBin is the consumer program, built by Build.
	ConsumerBin string
	// ConsumerArgs are more arguments for it (the idempotent consumer's:
	// see Idempotent).
	ConsumerArgs []string
	// Dir holds the accept log and the consumer processes' stderr.
	Dir string
	// Name prefixes the client-provided connection names: Name+"-harness"
	// and Name+"-consumer", each with its publishing connection's
	// (rabbitmq.PublishingConnectionName: Name+"-harness.publisher" and
	// Name+"-consumer.publisher").
	Name string
	// ManagementURL is the broker's management API with its credentials,
	// e.g. http://guest:guest@localhost:15672: for scenario Close, for the
	// broker's version, and for the dead letters at-least-once rungs hold
	// (which AMQP does not show), so it is needed with AtLeastOnceRungs.
	// ManagementFallbacks are the cluster's other nodes' APIs, tried in turn
	// when it does not answer.
	ManagementURL       string
	ManagementFallbacks []string
	// Broker names the broker ("RabbitMQ 3.10.8, Erlang 25.2.3"); when it
	// is empty, Run asks the management API.
	Broker string
	// BrokerSettings are settings of the broker's worth naming in the
	// report, such as "dead_letter_worker_publisher_confirm_timeout=180000".
	BrokerSettings []string
	// BrokerLogs are the broker nodes' log files: the report gives what they
	// said about dropped and dead-lettered messages while the run lasted.
	BrokerLogs []string
	// RestartBroker stops the broker node and starts it again (scenario
	// Restart); it returns once the node answers again.
	RestartBroker func(ctx context.Context) error
	// Alarm raises (on) or clears a memory or disk alarm on the broker
	// (scenario Alarm).
	Alarm func(ctx context.Context, on bool) error
	// AlarmHold is how long each alarm lasts once the harness is blocked
	// (default 3s).
	AlarmHold time.Duration
	// KillLeader SIGKILLs the node hosting queue's leader and names it;
	// RestartNode starts it again and returns once it is back in the
	// cluster (scenario Failover).
	KillLeader  func(ctx context.Context, queue string) (node string, err error)
	RestartNode func(ctx context.Context, node string) error
	// Cut makes fault i's network partition (scenario Partition).
	Cut func(ctx context.Context, i int) (Cut, error)
	// ConsumerURL, when set, is the node the consumer process dials
	// first, the others of URL and Fallbacks after it (so that it need not
	// share the publisher's node).
	ConsumerURL string
	// Quiet bounds the wait for every confirmed message to settle once
	// publishing has stopped (default 60s): the harness gives up when
	// nothing has moved for that long (no message settled, none queued,
	// no dead letter held by a rung). A rung holds a dead letter its
	// source queue has not confirmed (messages_dlx) until RabbitMQ's
	// dead_letter_worker_publisher_confirm_timeout (180s by default) sends
	// it again, so the wait can go on for longer, up to Quiet+Hold in all
	// (Hold defaults to 10m).
	Quiet time.Duration
	Hold  time.Duration
	Logf  func(format string, args ...any)
}

// Report is what a run counted.
type Report struct {
	Scenario string
	Faults   int
	// What the run ran on: the broker (its version and settings), the
	// source queue's type, the kind of rungs, the policy and the rate.
	Broker         string
	BrokerSettings []string
	QueueType      transport.QueueType
	Rungs          contract.RungKind
	RungsDefault   bool     // the consumer picked no kind of rung: Rungs is the library's default
	RungQueues     []string // the rungs' names without the source's: retry.quorum.1s
	Policy         string
	Rate           int
	Published      int // publishes attempted
	Confirmed      int // confirmed by the broker
	Unconfirmed    int // failed or not confirmed (they may still have arrived)
	Accepted       int // distinct confirmed numbers accepted
	DeadLettered   int // distinct confirmed numbers found in Q.dlq
	Parked         int // distinct confirmed numbers found in Q.parked
	StillQueued    int // distinct confirmed numbers still in the queue or on a rung
	Duplicates     int // extra accepts or extra set-aside copies
	Lost           []int
	Misplaced      []string // "n: where"
	// Unexpected are messages found that were never published (Jepsen's
	// "unexpected"): a number accepted, dead-lettered, parked or queued
	// that the harness never sent, or a message without a chaos number in
	// a queue of the run. There must be none.
	Unexpected []string
	// HeldByRungs is how many dead letters the rungs still held when the
	// run ended (messages_dlx): not lost, not settled either. The lost
	// numbers include them (the harness cannot tell which they are).
	HeldByRungs int
	// HeldMax is the most dead letters the rungs were seen holding while
	// the harness waited for every message to settle.
	HeldMax int
	// HeldSeen is the dead letters the rungs held, sampled every 5s from
	// the start of the run, at each change: "+offset count".
	HeldSeen []string
	// Settled is how long after publishing stopped every confirmed message
	// was settled (or the harness gave up waiting).
	Settled time.Duration
	// LostByHops counts the lost numbers by the rung hops on their way
	// (0 for numbers that never wait on a rung).
	LostByHops map[int]int
	// LostByFault places the lost numbers' confirms before the faults.
	LostByFault []string
	// BrokerLog is what the broker logged about dropped and dead-lettered
	// messages while the run lasted (Config.BrokerLogs), by kind of line.
	BrokerLog   []string
	Recovery    []time.Duration
	PubRecovery []time.Duration // scenarios Close, Restart: fault to the next confirm
	// Outage is, for each restart, how long stopping and starting the node
	// took (the broker was unreachable for about that long).
	Outage []time.Duration
	// BlockedAfter is, for each alarm, how long after it was raised the
	// harness's Conn.Health said blocked; BlockedErr is the error of the
	// last publish tried with a deadline while blocked.
	BlockedAfter []time.Duration
	BlockedErr   string
	// BlockedHealth is the harness's Conn.Health while the last alarm
	// blocked it: its status and detail.
	BlockedHealth string
	// AcceptedWhileBlocked is, for each alarm, how many messages the
	// consumer process accepted while the alarm was held (its stats lines):
	// whether consuming went on.
	AcceptedWhileBlocked []int
	// Killed names, for each failover, the node killed; Rejoin is how long
	// starting it again took, until its peers saw it.
	Killed []string
	Rejoin []time.Duration
	// Cuts says, for each partition, what was cut and what the load did
	// meanwhile.
	Cuts []string
	// Kills are the consumer processes SIGKILLed (scenario Kill), in order.
	Kills []KilledProcess
	// WaitingAtKill is, for each kill, how many deliveries the killed
	// process held in an in-process wait (its last stats line, <=100ms old).
	WaitingAtKill []int
	// ConsumerStats sums the last stats line of every consumer process
	// (a killed one's is at most 100ms old, so the sums are approximate).
	ConsumerStats map[string]int
	// Recovered are unconfirmed numbers (a publish that failed or whose
	// confirm never came: Jepsen's indeterminate enqueues) that arrived
	// anyway: Jepsen's "recovered".
	Recovered int
	// InDoubtAtHeal is, for each fault, how many confirmed messages
	// published before it and due to be accepted were not accepted yet
	// when it healed (the first accept of a message published after it):
	// waiting on a rung or in the consumer, in a queue whose leader moved,
	// or lost. SettledAfterHeal is how many of them were accounted for in
	// the end (all, when nothing is lost).
	InDoubtAtHeal    []int
	InDoubt          int // distinct numbers in InDoubtAtHeal's counts
	SettledAfterHeal int
	Elapsed          time.Duration
	// Timeline places each fault and each lost number's confirm in time
	// (offsets from the start of the run), to tell which fault lost it.
	Timeline []string
}

// OK reports whether nothing was lost, misplaced or left unsettled. Dead
// letters a rung still holds do not count when nothing is lost: every
// confirmed number is settled, so they are copies (a killed consumer's
// retry, say) still on their way back; with a loss they may be the lost
// messages, and OKButRungHops fails on them.
func (r Report) OK() bool {
	return len(r.Lost) == 0 && len(r.Misplaced) == 0 && len(r.Unexpected) == 0 && r.StillQueued == 0
}

// OKButRungHops reports whether nothing was misplaced or left unsettled and
// every lost number was lost on a way through a rung: what contract rungs,
// which RabbitMQ dead-letters at most once, are expected to lose.
func (r Report) OKButRungHops() bool {
	return len(r.Misplaced) == 0 && len(r.Unexpected) == 0 && r.StillQueued == 0 && r.HeldByRungs == 0 && r.LostByHops[0] == 0
}

// KilledProcess is a consumer process the harness SIGKILLed, and when.
type KilledProcess struct {
	PID int
	At  time.Time
}

// String is the report as a table.
func (r Report) String() string {
	var b strings.Builder
	row := func(k string, v any) { fmt.Fprintf(&b, "  %-22s %v\n", k, v) }
	fmt.Fprintf(&b, "chaos scenario %q, %d faults, %s\n", r.Scenario, r.Faults, r.Elapsed.Round(time.Millisecond))
	row("broker", r.Broker)
	if len(r.BrokerSettings) > 0 {
		row("broker settings", strings.Join(r.BrokerSettings, ", "))
	}
	row("source queue", r.QueueType)
	if len(r.RungQueues) == 0 {
		row("rungs", "none (every wait in the consumer)")
	} else {
		kind := string(r.Rungs)
		if r.RungsDefault {
			kind += ", the library's default (no WithRungs)"
		}
		row("rungs", fmt.Sprintf("%s (%s)", kind, strings.Join(r.RungQueues, ", ")))
	}
	row("policy", r.Policy)
	row("rate", fmt.Sprintf("%d/s", r.Rate))
	row("published", r.Published)
	row("confirmed", r.Confirmed)
	row("unconfirmed", r.Unconfirmed)
	row("accepted", r.Accepted)
	row("dead-lettered (Q.dlq)", r.DeadLettered)
	row("parked (Q.parked)", r.Parked)
	row("still queued", r.StillQueued)
	row("duplicates", r.Duplicates)
	row("lost", len(r.Lost))
	switch {
	case r.HeldByRungs > 0 && len(r.Lost) == 0:
		row("held by rungs", fmt.Sprintf("%d copies of settled messages, on their way back", r.HeldByRungs))
	case r.HeldByRungs > 0:
		row("held by rungs", r.HeldByRungs)
	}
	row("misplaced", len(r.Misplaced))
	row("unexpected", len(r.Unexpected))
	row("recovered", fmt.Sprintf("%d unconfirmed publishes arrived anyway", r.Recovered))
	if len(r.InDoubtAtHeal) > 0 {
		row("in doubt at heal", fmt.Sprintf("%v confirmed, due to be accepted, not yet when each fault healed; %d distinct, %d of them settled after", r.InDoubtAtHeal, r.InDoubt, r.SettledAfterHeal))
	}
	row("settled after", fmt.Sprintf("%v after publishing stopped", r.Settled.Round(100*time.Millisecond)))
	if r.HeldMax > 0 {
		row("held by rungs (max)", fmt.Sprintf("%d dead letters (messages_dlx) while waiting", r.HeldMax))
	}
	if len(r.HeldSeen) > 0 {
		row("held by rungs, seen", strings.Join(r.HeldSeen, ", "))
	}
	row("recovery (settle)", summary(r.Recovery))
	if len(r.PubRecovery) > 0 {
		row("recovery (publish)", summary(r.PubRecovery))
	}
	if len(r.Outage) > 0 {
		row("outage (stop+start)", summary(r.Outage))
	}
	if len(r.Killed) > 0 {
		row("nodes killed", strings.Join(r.Killed, ", "))
		row("rejoin (start again)", summary(r.Rejoin))
	}
	for _, c := range r.Cuts {
		row("cut", c)
	}
	if len(r.BlockedAfter) > 0 {
		row("blocked after", summary(r.BlockedAfter))
		row("publish while blocked", r.BlockedErr)
		row("health while blocked", r.BlockedHealth)
		row("accepted while held", fmt.Sprint(r.AcceptedWhileBlocked))
	}
	if len(r.WaitingAtKill) > 0 {
		row("in waits at kill", r.WaitingAtKill)
	}
	if len(r.ConsumerStats) > 0 {
		var parts []string
		for _, k := range []string{"accepted", "retried-in-consumer", "retried-on-rung", "dead-lettered", "parked", "requeued", "rung-missing", "set-aside-failed"} {
			parts = append(parts, fmt.Sprintf("%s=%d", k, r.ConsumerStats[k]))
		}
		for _, k := range []string{"duplicates-absorbed", "put-back"} { // the idempotent consumer's
			if v, ok := r.ConsumerStats[k]; ok {
				parts = append(parts, fmt.Sprintf("%s=%d", k, v))
			}
		}
		row("consumer stats (sum)", strings.Join(parts, " "))
	}
	if len(r.Lost) > 0 {
		row("lost numbers", abbreviate(r.Lost, 40))
		var parts []string
		for _, h := range slices.Sorted(maps.Keys(r.LostByHops)) {
			parts = append(parts, fmt.Sprintf("%d hops: %d", h, r.LostByHops[h]))
		}
		row("lost by rung hops", strings.Join(parts, ", "))
		for _, l := range r.LostByFault {
			row("lost, confirmed", l)
		}
	}
	for _, l := range r.BrokerLog {
		row("broker log", l)
	}
	if len(r.Misplaced) > 0 {
		row("misplaced", r.Misplaced)
	}
	if len(r.Unexpected) > 0 {
		row("unexpected", r.Unexpected)
	}
	for _, e := range r.Timeline {
		row("timeline", e)
	}
	return b.String()
}

// abbreviate shows at most n numbers of ns.
func abbreviate(ns []int, n int) string {
	if len(ns) <= n {
		return fmt.Sprint(ns)
	}
	return strings.TrimSuffix(fmt.Sprint(ns[:n]), "]") + fmt.Sprintf(" ... (%d more)]", len(ns)-n)
}

func summary(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	r := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	return fmt.Sprintf("min %v, median %v, mean %v, max %v (n=%d)",
		r(s[0]), r(s[len(s)/2]), r(sum/time.Duration(len(s))), r(s[len(s)-1]), len(s))
}

// Build compiles the consumer program into dir and returns its path.
func Build(ctx context.Context, dir string) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("building the chaos consumer needs the go command: %w", err)
	}
	out := filepath.Join(dir, "chaos-consumer")
	cmd := exec.CommandContext(ctx, goBin, "build", "-o", out, "github.com/acemq-go/acemq/internal/testing/chaos/consumer")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build of the chaos consumer: %w\n%s", err, b)
	}
	return out, nil
}

// rawJSON publishes a []byte as it is, labelled application/json, so that the
// harness can publish both JSON and bodies that are not JSON at all.
type rawJSON struct{}

func (rawJSON) ContentType() string { return contract.ContentTypeJSON }
func (rawJSON) Marshal(v any) ([]byte, error) {
	b, ok := v.([]byte)
	if !ok {
		return nil, fmt.Errorf("rawJSON marshals []byte, not %T", v)
	}
	return b, nil
}
func (rawJSON) Reads(string) bool { return false }
func (rawJSON) Unmarshal(string, []byte, any) error {
	return errors.New("rawJSON only publishes")
}

func messageID(n int) string { return "chaos-" + strconv.Itoa(n) }

func numberOf(m transport.Message) (int, bool) {
	id := m.MessageID
	if id == "" {
		id = acemq.ReadEnvelope(m).ID
	}
	n, err := strconv.Atoi(strings.TrimPrefix(id, "chaos-"))
	return n, err == nil && strings.HasPrefix(id, "chaos-")
}

func body(n int) []byte {
	if n%10 == 9 {
		return []byte("not json: message " + strconv.Itoa(n))
	}
	return []byte(`{"n":` + strconv.Itoa(n) + `}`)
}

// expected is where message n must end.
func expected(n int) string {
	switch n % 10 {
	case 8:
		return "dlq"
	case 9:
		return "parked"
	}
	return "accepted"
}

type run struct {
	cfg   Config
	conn  *acemq.Conn
	tr    transport.Transport
	log   *acceptLog
	rungs []string
	// ladderKind is the kind of rungs the consumer process uses.
	ladderKind contract.RungKind

	mu          sync.Mutex
	confirmed   map[int]bool
	unconfirmed map[int]bool
	published   int
	next        int // the number the next batch starts at

	dlq, parked map[int]int // drained copies by number

	proc          *exec.Cmd
	started       int
	kills         []KilledProcess
	waitingAtKill []int
	outage        []time.Duration
	blockedAfter  []time.Duration
	blockedErr    string
	blockedHealth string
	heldAccepts   []int
	killed        []string
	rejoin        []time.Duration
	cuts          []string
	t00           time.Time
	confirmedAt   map[int]time.Time // by batch start number
	faultAt       []string
	faultStart    []time.Time
	heldSeen      []string     // "+offset held" at each change (at-least-once rungs)
	unexpected    []string     // messages drained without a chaos number
	inDoubt       map[int]bool // confirmed, unsettled when a fault healed
	inDoubtAtHeal []int
}

// Run runs one scenario and reports what it counted. An error means the
// harness itself could not run; losses are in the Report.
func Run(ctx context.Context, cfg Config) (rep Report, err error) {
	if cfg.Rate <= 0 {
		cfg.Rate = 300
	}
	if cfg.Gap <= 0 {
		cfg.Gap = 2 * time.Second
	}
	if cfg.Quiet <= 0 {
		cfg.Quiet = 60 * time.Second
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.Policy == "" {
		cfg.Policy = Policy
	}
	if cfg.AlarmHold <= 0 {
		cfg.AlarmHold = 3 * time.Second
	}
	if cfg.QueueType == "" {
		cfg.QueueType = transport.Classic
	}
	if cfg.Hold <= 0 {
		cfg.Hold = 10 * time.Minute
	}
	if !slices.Contains([]string{Kill, Close, Restart, Alarm, Failover, Partition}, cfg.Scenario) {
		return rep, fmt.Errorf("unknown scenario %q", cfg.Scenario)
	}
	if cfg.Scenario == Alarm && cfg.Alarm == nil {
		return rep, errors.New("scenario alarm needs Config.Alarm")
	}
	if cfg.Scenario == Failover && (cfg.KillLeader == nil || cfg.RestartNode == nil || len(cfg.Fallbacks) == 0 || cfg.QueueType != transport.Quorum) {
		return rep, errors.New("scenario failover needs Config.KillLeader, RestartNode, Fallbacks and a quorum QueueType")
	}
	if cfg.Scenario == Partition && (cfg.Cut == nil || len(cfg.Fallbacks) == 0) {
		return rep, errors.New("scenario partition needs Config.Cut and Fallbacks")
	}
	if cfg.Scenario == Restart && cfg.RestartBroker == nil {
		return rep, errors.New("scenario restart needs Config.RestartBroker")
	}
	if cfg.Scenario == Close && cfg.ManagementURL == "" {
		return rep, errors.New("scenario close needs Config.ManagementURL")
	}
	if kind, err := contract.ParseRungKind(string(cfg.Rungs)); err == nil && kind == contract.AtLeastOnceRungs && cfg.ManagementURL == "" {
		return rep, errors.New("at-least-once rungs need Config.ManagementURL: the dead letters they hold show only there")
	}
	if cfg.Broker == "" {
		cfg.Broker = "unknown (no management API)"
		if cfg.ManagementURL != "" {
			if cfg.Broker, err = brokerVersion(ctx, cfg.ManagementURL); err != nil {
				return rep, err
			}
		}
	}
	marks := markLogs(cfg.BrokerLogs)
	start := time.Now()
	r := &run{cfg: cfg, log: newAcceptLog(filepath.Join(cfg.Dir, "accepted.log")),
		confirmed: map[int]bool{}, unconfirmed: map[int]bool{}, dlq: map[int]int{}, parked: map[int]int{},
		t00: start, confirmedAt: map[int]time.Time{}, inDoubt: map[int]bool{}}
	policy, err := acemq.ParsePolicy(cfg.Policy)
	if err != nil {
		return rep, err
	}
	ladder, err := retry.NewLadder(cfg.Queue, policy, cfg.Rungs)
	if err != nil {
		return rep, err
	}
	r.rungs, r.ladderKind = ladder.Queues(), ladder.Kind()
	cfg.Logf("chaos: %s on %s: %s source queue, %s rungs %v, policy %s, %d/s",
		cfg.Scenario, cfg.Broker, cfg.QueueType, r.ladderKind, r.rungs, cfg.Policy, cfg.Rate)

	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	r.conn, err = acemq.Connect(cctx, cfg.URL, acemq.WithConnectionName(cfg.Name+"-harness"), acemq.WithFallbackURLs(cfg.Fallbacks...))
	cancel()
	if err != nil {
		return rep, err
	}
	defer r.conn.Close()
	r.tr = r.conn.Transport()
	if err := r.tr.DeclareQueue(ctx, transport.Queue{Name: cfg.Queue, Type: cfg.QueueType, Durable: true}); err != nil {
		return rep, err
	}
	defer r.cleanup()
	if err := r.startConsumer(ctx); err != nil {
		return rep, err
	}
	defer r.stopConsumer(syscall.SIGKILL)
	if cfg.Rungs == "" && len(r.rungs) > 0 {
		// The consumer declared its ladder as it subscribed: the one the
		// harness counts on, or the library's default is not what it says.
		if _, err := r.tr.InspectQueue(ctx, r.rungs[0]); err != nil {
			return rep, fmt.Errorf("the consumer on the library's default rungs did not declare %s: %w", r.rungs[0], err)
		}
	}

	// Load flows for the whole fault phase.
	pubCtx, stopPub := context.WithCancel(ctx)
	pubDone := make(chan struct{})
	go func() { defer close(pubDone); r.publish(pubCtx) }()
	if r.ladderKind == contract.AtLeastOnceRungs {
		watchCtx, stopWatch := context.WithCancel(ctx)
		watchDone := make(chan struct{})
		go func() { defer close(watchDone); r.watchHeld(watchCtx) }()
		defer func() { stopWatch(); <-watchDone }()
	}

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 5))
	for i := 0; i < cfg.Faults; i++ {
		pause := cfg.Gap/10 + time.Duration(rng.Int64N(int64(cfg.Gap-cfg.Gap/10)))
		select {
		case <-ctx.Done():
			stopPub()
			<-pubDone
			return rep, ctx.Err()
		case <-time.After(pause):
		}
		settled, pub, err := r.fault(ctx, i)
		if err != nil {
			stopPub()
			<-pubDone
			return rep, err
		}
		rep.Recovery = append(rep.Recovery, settled)
		if cfg.Scenario != Kill {
			rep.PubRecovery = append(rep.PubRecovery, pub)
		}
	}
	// A little more load after the last fault, then stop publishing.
	time.Sleep(500 * time.Millisecond)
	stopPub()
	<-pubDone

	// The wait ends once every confirmed message is settled and nothing is
	// held or queued, or when nothing has moved for cfg.Quiet (no message
	// settled, none held by a rung, none queued), or at Quiet+Hold in all.
	quietFrom := time.Now()
	lastMove, lastNote, lastMissing := quietFrom, quietFrom, -1
	for {
		accepted, _, err := r.log.read()
		if err != nil {
			return rep, err
		}
		if err := r.drainSetAside(ctx); err != nil {
			return rep, err
		}
		missing := r.missing(accepted)
		held, err := r.held(ctx)
		if err != nil {
			cfg.Logf("chaos: %v", err)
			held = map[string]int{"?": 1} // unknown: not empty
		}
		heldSum := sum(held)
		rep.HeldMax = max(rep.HeldMax, heldSum)
		empty := r.empty(ctx)
		if missing == 0 && heldSum == 0 && empty {
			break
		}
		now := time.Now()
		if missing != lastMissing || heldSum > 0 || !empty {
			lastMove, lastMissing = now, missing
		}
		if now.Sub(lastMove) > cfg.Quiet || now.Sub(quietFrom) > cfg.Quiet+cfg.Hold {
			cfg.Logf("chaos: giving up the wait: %d confirmed messages not settled, dead letters held by rungs %v, %v after publishing stopped",
				missing, held, now.Sub(quietFrom).Round(time.Second))
			break
		}
		if now.Sub(lastNote) >= 15*time.Second {
			lastNote = now
			cfg.Logf("chaos: %v after publishing stopped: %d confirmed messages not settled yet, dead letters held by rungs (messages_dlx) %v",
				now.Sub(quietFrom).Round(time.Second), missing, held)
		}
		time.Sleep(200 * time.Millisecond)
	}
	rep.Settled = time.Since(quietFrom)
	if err := r.stopConsumer(syscall.SIGTERM); err != nil {
		cfg.Logf("chaos: stopping the consumer: %v", err)
	}
	// Account for everything.
	if err := r.drainSetAside(ctx); err != nil {
		return rep, err
	}
	queued := map[int]int{}
	for _, q := range append([]string{cfg.Queue}, r.rungs...) {
		if err := r.drain(ctx, q, queued); err != nil {
			return rep, err
		}
	}
	accepted, records, err := r.log.read()
	if err != nil {
		return rep, err
	}
	r.mu.Lock()
	counted := account(tally{published: r.published, confirmed: r.confirmed, unconfirmed: r.unconfirmed,
		accepted: accepted, records: records, dlq: r.dlq, parked: r.parked, queued: queued})
	counted.Unexpected = append(counted.Unexpected, r.unexpected...)
	counted.InDoubtAtHeal, counted.InDoubt = r.inDoubtAtHeal, len(r.inDoubt)
	for n := range r.inDoubt {
		if !slices.Contains(counted.Lost, n) {
			counted.SettledAfterHeal++
		}
	}
	r.mu.Unlock()
	counted.Recovery, counted.PubRecovery, counted.WaitingAtKill = rep.Recovery, rep.PubRecovery, r.waitingAtKill
	counted.Kills = r.kills
	counted.Outage = r.outage
	counted.BlockedAfter, counted.BlockedErr, counted.BlockedHealth = r.blockedAfter, r.blockedErr, r.blockedHealth
	counted.AcceptedWhileBlocked = r.heldAccepts
	counted.Killed, counted.Rejoin = r.killed, r.rejoin
	counted.Cuts = r.cuts
	counted.ConsumerStats = map[string]int{}
	for i := 1; i <= r.started; i++ {
		for k, v := range lastStats(r.stderrPath(i)) {
			counted.ConsumerStats[k] += v
		}
	}
	held, err := r.held(ctx)
	if err != nil {
		return rep, err
	}
	counted.HeldByRungs = sum(held)
	counted.Settled, counted.HeldMax = rep.Settled, rep.HeldMax
	r.mu.Lock()
	counted.HeldSeen = slices.Clone(r.heldSeen)
	r.mu.Unlock()
	rep = counted
	if len(rep.Lost) > 0 {
		rep.Timeline = append(rep.Timeline, r.faultAt...)
		rep.LostByHops = map[int]int{}
		r.mu.Lock()
		for i, n := range rep.Lost {
			rep.LostByHops[rungHops(policy, n)]++
			if i < 20 {
				at := r.confirmedAt[n-n%10]
				rep.Timeline = append(rep.Timeline, fmt.Sprintf("lost %d (n%%10=%d, expected %s, %d rung hops) confirmed at +%v", n, n%10, expected(n), rungHops(policy, n), at.Sub(start).Round(time.Millisecond)))
			}
		}
		rep.LostByFault = r.lostByFault(rep.Lost)
		r.mu.Unlock()
		if len(rep.Lost) > 20 {
			rep.Timeline = append(rep.Timeline, fmt.Sprintf("(%d more lost numbers)", len(rep.Lost)-20))
		}
	}
	rep.BrokerLog = readLogs(marks)
	rep.Scenario, rep.Faults = cfg.Scenario, cfg.Faults
	rep.Broker, rep.BrokerSettings = cfg.Broker, cfg.BrokerSettings
	rep.QueueType, rep.Rungs, rep.Policy, rep.Rate = cfg.QueueType, r.ladderKind, cfg.Policy, cfg.Rate
	rep.RungsDefault = cfg.Rungs == ""
	for _, q := range r.rungs {
		rep.RungQueues = append(rep.RungQueues, strings.TrimPrefix(q, cfg.Queue+"."))
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// tally is what a run saw: the numbers published and where they were found.
type tally struct {
	published              int
	confirmed, unconfirmed map[int]bool
	accepted               map[int]int // accept log records by number
	records                int         // accept log records
	dlq, parked, queued    map[int]int // copies found by number
}

// account turns a tally into a Report: every confirmed number must be found
// (else lost), every number found must be where its number says (else
// misplaced), and what was found more than once is a duplicate.
func account(t tally) Report {
	var rep Report
	rep.Published, rep.Confirmed, rep.Unconfirmed = t.published, len(t.confirmed), len(t.unconfirmed)
	rep.Duplicates = t.records - len(t.accepted)
	for _, m := range []map[int]int{t.dlq, t.parked} {
		for _, c := range m {
			rep.Duplicates += c - 1
		}
	}
	places := map[string]map[int]int{"accepted": t.accepted, "dlq": t.dlq, "parked": t.parked}
	all := map[int]bool{}
	for n := range t.confirmed {
		all[n] = true
	}
	for _, m := range []map[int]int{t.accepted, t.dlq, t.parked, t.queued} {
		for n := range m {
			all[n] = true
		}
	}
	places["queued"] = t.queued
	for _, n := range slices.Sorted(maps.Keys(all)) {
		if !t.confirmed[n] && !t.unconfirmed[n] {
			for _, place := range []string{"accepted", "dlq", "parked", "queued"} {
				if places[place][n] > 0 {
					rep.Unexpected = append(rep.Unexpected, fmt.Sprintf("%d: in %s", n, place))
				}
			}
			continue
		}
		found := false
		for _, place := range []string{"accepted", "dlq", "parked"} {
			if places[place][n] == 0 {
				continue
			}
			found = true
			if place != expected(n) {
				rep.Misplaced = append(rep.Misplaced, fmt.Sprintf("%d: in %s, expected %s", n, place, expected(n)))
			}
		}
		if t.unconfirmed[n] {
			if found || t.queued[n] > 0 {
				rep.Recovered++
			}
			continue
		}
		switch {
		case t.accepted[n] > 0:
			rep.Accepted++
		case t.dlq[n] > 0:
			rep.DeadLettered++
		case t.parked[n] > 0:
			rep.Parked++
		}
		switch {
		case t.queued[n] > 0 && found:
			rep.Duplicates += t.queued[n] // a settled message's second copy, still on its way
		case t.queued[n] > 0:
			rep.StillQueued++
			rep.Duplicates += t.queued[n] - 1
			found = true
		}
		if !found {
			rep.Lost = append(rep.Lost, n)
		}
	}
	return rep
}

// rungHops is how many times n goes to a rung under policy: once for every
// failed attempt the policy answers with a broker wait (the handler fails
// a 6 once, a 7 twice, an 8 always; a 9 is parked before any attempt).
func rungHops(policy acemq.RetryPolicy, n int) int {
	fails := 0
	switch n % 10 {
	case 6:
		fails = 1
	case 7:
		fails = 2
	case 8:
		fails = policy.MaxAttempts()
	}
	hops := 0
	for a := 1; a <= fails; a++ {
		if retry.Decide(policy, a, 0).Outcome == retry.OnRung {
			hops++
		}
	}
	return hops
}

// lostByFault groups lost numbers by the fault whose start is nearest
// their confirm: how many, and from how long before to how long after the
// fault's start they were confirmed (a restart's node goes down a few
// seconds after the harness starts stopping it). r.mu held.
func (r *run) lostByFault(lost []int) []string {
	if len(r.faultStart) == 0 {
		return nil
	}
	type group struct {
		n        int
		min, max time.Duration // confirm minus the fault's start
	}
	groups := make([]group, len(r.faultStart))
	for _, n := range lost {
		at := r.confirmedAt[n-n%10]
		near := 0
		for i, f := range r.faultStart {
			if (at.Sub(f)).Abs() < (at.Sub(r.faultStart[near])).Abs() {
				near = i
			}
		}
		g, d := &groups[near], at.Sub(r.faultStart[near])
		if g.n == 0 || d < g.min {
			g.min = d
		}
		if g.n == 0 || d > g.max {
			g.max = d
		}
		g.n++
	}
	side := func(d time.Duration) string {
		d = d.Round(100 * time.Millisecond)
		if d < 0 {
			return fmt.Sprintf("%v before", -d)
		}
		return fmt.Sprintf("%v after", d)
	}
	var out []string
	for i, g := range groups {
		if g.n > 0 {
			out = append(out, fmt.Sprintf("%d around fault %d (+%v), from %s to %s its start", g.n, i+1,
				r.faultStart[i].Sub(r.t00).Round(100*time.Millisecond), side(g.min), side(g.max)))
		}
	}
	return out
}

// held is how many dead letters each rung holds unconfirmed (none for
// contract rungs, which hold none; through the management API otherwise).
func (r *run) held(ctx context.Context) (map[string]int, error) {
	if r.ladderKind != contract.AtLeastOnceRungs || len(r.rungs) == 0 {
		return nil, nil
	}
	held, err := heldDeadLetters(ctx, append([]string{r.cfg.ManagementURL}, r.cfg.ManagementFallbacks...), r.rungs)
	if err != nil {
		return nil, err
	}
	short := map[string]int{}
	for q, n := range held {
		short[strings.TrimPrefix(q, r.cfg.Queue+".")] = n
	}
	return short, nil
}

// watchHeld samples the dead letters the rungs hold every 5s (the broker's
// statistics interval) until ctx ends, noting each change in r.heldSeen.
func (r *run) watchHeld(ctx context.Context) {
	last := 0
	for {
		if held, err := r.held(ctx); err == nil {
			if n := sum(held); n != last {
				last = n
				r.mu.Lock()
				r.heldSeen = append(r.heldSeen, fmt.Sprintf("+%v %d", time.Since(r.t00).Round(time.Second), n))
				r.mu.Unlock()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Second):
		}
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// empty reports whether the queue and its rungs hold no ready message (second
// copies of settled messages, which a kill can leave on a rung, settle too).
func (r *run) empty(ctx context.Context) bool {
	for _, q := range append([]string{r.cfg.Queue}, r.rungs...) {
		st, err := r.tr.InspectQueue(ctx, q)
		if err != nil || st.Messages > 0 {
			return false
		}
	}
	return true
}

// missing counts confirmed messages not yet accepted, dead-lettered or parked.
func (r *run) missing(accepted map[int]int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := 0
	for n := range r.confirmed {
		if accepted[n] == 0 && r.dlq[n] == 0 && r.parked[n] == 0 {
			c++
		}
	}
	return c
}

// publish sends numbered messages in small confirmed batches at cfg.Rate
// until ctx ends. A message whose publish failed is counted unconfirmed and
// never published again.
func (r *run) publish(ctx context.Context) {
	pub, err := acemq.NewPublisher[[]byte](r.conn, "", acemq.WithCodec(rawJSON{}), acemq.WithOrigin("chaos"))
	if err != nil {
		panic(err) // the options are the harness's own
	}
	const batch = 10
	interval := time.Second * batch / time.Duration(r.cfg.Rate)
	next := 0
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		r.mu.Lock()
		r.next = next
		r.mu.Unlock()
		out := make([]acemq.Outgoing[[]byte], batch)
		for i := range out {
			n := next + i
			out[i] = acemq.Outgoing[[]byte]{RoutingKey: r.cfg.Queue, Body: body(n),
				Options: []acemq.MessageOption{acemq.WithMessageID(messageID(n))}}
		}
		// Not ctx: a batch once started runs to its confirms.
		bctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := pub.PublishBatch(bctx, out)
		cancel()
		failed := map[int]bool{}
		var be *acemq.BatchError
		switch {
		case err == nil:
		case errors.As(err, &be):
			for _, f := range be.Failed {
				failed[f.Index] = true
			}
		default:
			for i := range out {
				failed[i] = true
			}
		}
		if err != nil {
			r.cfg.Logf("chaos: batch %d..%d: %d not confirmed: %v", next, next+batch-1, len(failed), err)
		}
		r.mu.Lock()
		for i := range out {
			if failed[i] {
				r.unconfirmed[next+i] = true
			} else {
				r.confirmed[next+i] = true
			}
		}
		r.published += batch
		if len(failed) < batch {
			r.confirmedAt[next] = time.Now()
		}
		r.mu.Unlock()
		next += batch
	}
}

// fault injects one fault and waits for the consumer to settle a message
// again (an accept recorded after the fault) and, for Close and Restart, for
// the publisher to have a batch confirmed again.
func (r *run) fault(ctx context.Context, i int) (settle, pub time.Duration, err error) {
	size := func() int64 {
		st, err := os.Stat(r.log.path)
		if err != nil {
			return 0
		}
		return st.Size()
	}
	var t0 time.Time
	var before int64
	var since time.Time // the publisher's next confirm is the first one after this
	deadline := time.Now().Add(60 * time.Second)
	switch r.cfg.Scenario {
	case Kill:
		t0 = time.Now()
		if r.proc != nil {
			r.kills = append(r.kills, KilledProcess{PID: r.proc.Process.Pid, At: t0})
		}
		if err := r.stopConsumer(syscall.SIGKILL); err != nil {
			return 0, 0, err
		}
		before = size() // the dead process records nothing more
		r.waitingAtKill = append(r.waitingAtKill, r.lastWaiting())
		if err := r.startConsumer(ctx); err != nil {
			return 0, 0, err
		}
	case Close:
		before = size()
		// Both connections of each: the main one (consumers, declarations)
		// and the publishing one (the harness's publishes, the consumer's
		// retries and set-asides), as when the network fails.
		harness, consumer := r.cfg.Name+"-harness", r.cfg.Name+"-consumer"
		if t0, err = brokertest.CloseNamed(ctx, r.cfg.ManagementURL, harness, rabbitmq.PublishingConnectionName(harness),
			consumer, rabbitmq.PublishingConnectionName(consumer)); err != nil {
			return 0, 0, fmt.Errorf("fault %d (close): %w", i+1, err)
		}
		deadline = t0.Add(60 * time.Second)
	case Restart:
		t0 = time.Now()
		if err := r.cfg.RestartBroker(ctx); err != nil {
			return 0, 0, fmt.Errorf("fault %d (restart): %w", i+1, err)
		}
		up := time.Now()
		r.outage = append(r.outage, up.Sub(t0))
		r.cfg.Logf("chaos: fault %d/%d (restart): node stopped and started again in %v", i+1, r.cfg.Faults, up.Sub(t0).Round(time.Millisecond))
		deadline = up.Add(60 * time.Second)
		// The node takes a moment to go down and may still have confirmed
		// a batch a little after t0: count only confirms received once it
		// is up again (and, below, accepts of what was published then).
		since = up
	case Failover:
		var node string
		if node, err = r.cfg.KillLeader(ctx, r.cfg.Queue); err != nil {
			return 0, 0, fmt.Errorf("fault %d (failover): %w", i+1, err)
		}
		t0 = time.Now() // the node is gone (finding the leader takes a while)
		r.killed = append(r.killed, node)
		r.cfg.Logf("chaos: fault %d/%d (failover): killed %s, the leader of %s", i+1, r.cfg.Faults, node, r.cfg.Queue)
		deadline = t0.Add(60 * time.Second)
		// The node comes back once the others have taken over (below), or
		// failed to.
		defer func() {
			up := time.Now()
			if rerr := r.cfg.RestartNode(context.WithoutCancel(ctx), node); rerr != nil {
				err = errors.Join(err, fmt.Errorf("fault %d (failover): starting %s again: %w", i+1, node, rerr))
				return
			}
			r.rejoin = append(r.rejoin, time.Since(up))
			r.cfg.Logf("chaos: fault %d/%d (failover): %s back in the cluster after %v", i+1, r.cfg.Faults, node, time.Since(up).Round(time.Millisecond))
		}()
	case Partition:
		if t0, err = r.partition(ctx, i); err != nil {
			return 0, 0, fmt.Errorf("fault %d (partition): %w", i+1, err)
		}
		// As for Restart: the accept awaited is of a message published
		// after the heal (below), within 60s of it.
		deadline = time.Now().Add(60 * time.Second)
	case Alarm:
		if since, err = r.alarm(ctx, i); err != nil {
			return 0, 0, fmt.Errorf("fault %d (alarm): %w", i+1, err)
		}
		// Recovery counts from the alarm's end: while it lasts, nothing
		// is published, by design.
		t0 = since
		deadline = since.Add(60 * time.Second)
	}
	r.mu.Lock()
	first := r.next + 10 // the batch in flight may have been sent before the fault
	r.mu.Unlock()
	// The deadline guards liveness, not speed: on a loaded machine the
	// consumer may still be working through what queued up before the
	// fault, so every accept it records buys another 60s, up to Hold.
	limit := deadline.Add(r.cfg.Hold)
	seen := size()
	stalled := func() bool {
		if now := size(); now != seen {
			seen = now
			deadline = time.Now().Add(60 * time.Second)
			if deadline.After(limit) {
				deadline = limit
			}
		}
		return time.Now().After(deadline)
	}
	// Kill: the next accept the restarted process records. Close, Restart:
	// handlers running at the fault may still record an accept (whose ack
	// then fails), so wait for the accept of a message published after the
	// fault: the publisher and the consumer have both come back.
	for {
		if r.cfg.Scenario == Kill && size() > before {
			break
		}
		if r.cfg.Scenario != Kill {
			after, err := r.log.acceptedFrom(first)
			if err != nil {
				return 0, 0, err
			}
			if after {
				break
			}
		}
		if stalled() {
			return 0, 0, fmt.Errorf("fault %d (%s): no message published after the fault settled: nothing settled for 60s (from the fault, or for restart from the node being up, or from the last accept), or %v passed", i+1, r.cfg.Scenario, r.cfg.Hold)
		}
		time.Sleep(5 * time.Millisecond)
	}
	settle = time.Since(t0)
	r.noteInDoubt(first)
	r.faultStart = append(r.faultStart, t0)
	r.faultAt = append(r.faultAt, fmt.Sprintf("fault %d at +%v, settling again at +%v", i+1,
		t0.Sub(r.t00).Round(time.Millisecond), time.Since(r.t00).Round(time.Millisecond)))
	if since.IsZero() {
		since = t0
	}
	if r.cfg.Scenario != Kill {
		for {
			if first, ok := r.firstConfirmAfter(since); ok {
				pub = first.Sub(t0)
				break
			}
			if time.Now().After(deadline) {
				return 0, 0, fmt.Errorf("fault %d (%s): no publish confirmed within 60s", i+1, r.cfg.Scenario)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	r.cfg.Logf("chaos: fault %d/%d (%s): settling again after %v", i+1, r.cfg.Faults, r.cfg.Scenario, settle.Round(time.Millisecond))
	return settle, pub, nil
}

// noteInDoubt notes, as a fault heals, the confirmed messages published
// before it (numbers below first) that are due to be accepted and are not
// yet. Those due in Q.dlq or Q.parked are left out: telling would mean
// draining those queues mid-run, a channel a message, minutes at this rate.
func (r *run) noteInDoubt(first int) {
	accepted, _, err := r.log.read()
	if err != nil {
		r.cfg.Logf("chaos: at heal: %v", err)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c := 0
	for n := range r.confirmed {
		if n < first && expected(n) == "accepted" && accepted[n] == 0 {
			r.inDoubt[n] = true
			c++
		}
	}
	r.inDoubtAtHeal = append(r.inDoubtAtHeal, c)
}

// alarm raises an alarm, waits for the harness's Conn to say it is blocked,
// checks that a publish with a deadline fails with ErrBlocked, holds the
// alarm for cfg.AlarmHold and clears it, returning when it cleared. It clears
// the alarm whatever happens.
func (r *run) alarm(ctx context.Context, i int) (cleared time.Time, err error) {
	raised := time.Now()
	if err := r.cfg.Alarm(ctx, true); err != nil {
		return cleared, err
	}
	defer func() {
		if cerr := r.cfg.Alarm(context.WithoutCancel(ctx), false); cerr != nil && err == nil {
			err = cerr
		}
		cleared = time.Now()
	}()
	// A blocked connection's round trip waits: keep Health's short.
	health := func() acemq.Health {
		hctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		return r.conn.Health(hctx)
	}
	// Bounded from the alarm's set, not from raised: under load the
	// rabbitmqctl commands alone have taken 20 s and more.
	set := time.Now()
	for !health().Blocked {
		if time.Since(set) > 30*time.Second {
			return cleared, fmt.Errorf("the Conn's Health did not say blocked within 30s of the alarm's set (the commands raising it took %v): %+v",
				set.Sub(raised).Round(time.Millisecond), health())
		}
		time.Sleep(5 * time.Millisecond)
	}
	r.blockedAfter = append(r.blockedAfter, time.Since(raised))
	h := health()
	r.blockedHealth = string(h.Status()) + ": " + h.Detail()
	r.cfg.Logf("chaos: fault %d/%d (alarm): blocked after %v (the commands raising it took %v): %q", i+1, r.cfg.Faults,
		time.Since(raised).Round(time.Millisecond), set.Sub(raised).Round(time.Millisecond), h.BlockedReason)

	// The probe's routing key reaches no queue: were it published after
	// all, it would come back unroutable instead of landing anywhere.
	probe, err := acemq.NewPublisher[[]byte](r.conn, "", acemq.WithCodec(rawJSON{}))
	if err != nil {
		return time.Time{}, err
	}
	pctx, cancel := context.WithTimeout(ctx, time.Second)
	perr := probe.Publish(pctx, r.cfg.Queue+".probe", []byte(`{"probe":true}`))
	cancel()
	if !errors.Is(perr, acemq.ErrBlocked) {
		return cleared, fmt.Errorf("a publish with a 1s deadline while blocked: %v, want an error matching ErrBlocked", perr)
	}
	r.blockedErr = perr.Error()
	before := lastStats(r.stderrPath(r.started))
	time.Sleep(r.cfg.AlarmHold)
	if after := lastStats(r.stderrPath(r.started)); before != nil && after != nil {
		r.heldAccepts = append(r.heldAccepts, after["accepted"]-before["accepted"])
	}
	return cleared, nil
}

// firstConfirmAfter is when the first batch confirmed after t was.
func (r *run) firstConfirmAfter(t time.Time) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var first time.Time
	for _, at := range r.confirmedAt {
		if at.After(t) && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	return first, !first.IsZero()
}

// lastWaiting reads the Waiting count of the current consumer process's last
// stats line (-1 when there is none).
func (r *run) lastWaiting() int {
	st := lastStats(r.stderrPath(r.started))
	if st == nil {
		return -1
	}
	return st["waiting"]
}

// lastStats parses the last "stats k=v ..." line of a consumer's stderr.
func lastStats(path string) map[string]int {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	lines := strings.Split(string(b), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		rest, ok := strings.CutPrefix(lines[i], "stats ")
		if !ok {
			continue
		}
		st := map[string]int{}
		for _, kv := range strings.Fields(rest) {
			k, v, _ := strings.Cut(kv, "=")
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil // a line cut short by a kill
			}
			st[k] = n
		}
		return st
	}
	return nil
}

func (r *run) stderrPath(i int) string {
	return filepath.Join(r.cfg.Dir, fmt.Sprintf("consumer-%02d.stderr", i))
}

func (r *run) startConsumer(ctx context.Context) error {
	r.started++
	errLog, err := os.Create(r.stderrPath(r.started))
	if err != nil {
		return err
	}
	defer errLog.Close()
	first, fallbacks := r.cfg.URL, r.cfg.Fallbacks
	if r.cfg.ConsumerURL != "" {
		first, fallbacks = r.cfg.ConsumerURL, slices.DeleteFunc(append([]string{r.cfg.URL}, r.cfg.Fallbacks...),
			func(u string) bool { return u == r.cfg.ConsumerURL })
	}
	args := []string{"--url", first, "--queue", r.cfg.Queue,
		"--log", r.log.path, "--name", r.cfg.Name + "-consumer", "--policy", r.cfg.Policy, "--rungs", string(r.cfg.Rungs)}
	for _, u := range fallbacks {
		args = append(args, "--fallback", u)
	}
	args = append(args, r.cfg.ConsumerArgs...)
	cmd := exec.Command(r.cfg.ConsumerBin, args...)
	cmd.Stderr = errLog
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the chaos consumer: %w", err)
	}
	r.proc = cmd
	// Subscribed once the queue shows a consumer.
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := r.tr.InspectQueue(ctx, r.cfg.Queue)
		if err == nil && st.Consumers > 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the chaos consumer did not subscribe within 30s (see %s)", errLog.Name())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *run) stopConsumer(sig syscall.Signal) error {
	if r.proc == nil {
		return nil
	}
	p := r.proc
	r.proc = nil
	_ = p.Process.Signal(sig)
	done := make(chan error, 1)
	go func() { done <- p.Wait() }()
	select {
	case err := <-done:
		if sig == syscall.SIGKILL {
			return nil
		}
		return err
	case <-time.After(20 * time.Second):
		_ = p.Process.Kill()
		<-done
		return fmt.Errorf("the chaos consumer did not exit within 20s of %v; killed", sig)
	}
}

// acceptLog is the consumer's accept log, read as it grows: each read
// parses only the lines added since the last, since the waits read it every
// few milliseconds and a run's log holds tens of thousands of lines. The
// consumer only appends to it, also across its restarts.
type acceptLog struct {
	path string

	mu      sync.Mutex
	off     int64       // how far it has been read
	counts  map[int]int // how often each number was accepted
	records int
	highest int // the highest number accepted, -1 before any
}

func newAcceptLog(path string) *acceptLog {
	return &acceptLog{path: path, counts: map[int]int{}, highest: -1}
}

// read returns how often each number was accepted and how many records
// there are so far. A last line without its newline is left for the next
// read. The map is the log's own: the caller reads it, before the next read.
func (l *acceptLog) read() (map[int]int, int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := os.Open(l.path)
	if errors.Is(err, os.ErrNotExist) {
		return l.counts, l.records, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	if _, err := f.Seek(l.off, io.SeekStart); err != nil {
		return nil, 0, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, 0, err
	}
	end := bytes.LastIndexByte(data, '\n') + 1
	for line := range bytes.Lines(data[:end]) {
		n, err := strconv.Atoi(string(bytes.TrimSuffix(line, []byte("\n"))))
		if err != nil {
			return nil, 0, fmt.Errorf("accept log %s: bad record %q", l.path, line)
		}
		// Past each record as it counts, so a read after an error counts
		// none twice.
		l.off += int64(len(line))
		l.counts[n]++
		l.records++
		l.highest = max(l.highest, n)
	}
	return l.counts, l.records, nil
}

// acceptedFrom reports whether a number of first or more has been accepted.
func (l *acceptLog) acceptedFrom(first int) (bool, error) {
	if _, _, err := l.read(); err != nil {
		return false, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.highest >= first, nil
}

func (r *run) drainSetAside(ctx context.Context) error {
	r.mu.Lock()
	dlq, parked := r.dlq, r.parked
	r.mu.Unlock()
	into := map[int]int{}
	if err := r.drain(ctx, contract.DeadLetterQueue(r.cfg.Queue), into); err != nil {
		return err
	}
	intoP := map[int]int{}
	if err := r.drain(ctx, contract.ParkedQueue(r.cfg.Queue), intoP); err != nil {
		return err
	}
	r.mu.Lock()
	for n, c := range into {
		dlq[n] += c
	}
	for n, c := range intoP {
		parked[n] += c
	}
	r.mu.Unlock()
	return nil
}

// drain takes every message of queue (Get, then ack), counting each number
// into counts once its ack went through (a failed ack returns the message).
func (r *run) drain(ctx context.Context, queue string, counts map[int]int) error {
	for {
		gctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		d, ok, err := r.tr.Get(gctx, queue)
		cancel()
		if errors.Is(err, transport.ErrNotFound) {
			return nil // not declared (yet)
		}
		if err != nil {
			return fmt.Errorf("draining %s: %w", queue, err)
		}
		if !ok {
			return nil
		}
		n, ok := numberOf(d.Message)
		if err := d.Ack(); err != nil {
			r.cfg.Logf("chaos: draining %s: ack: %v (it comes back)", queue, err)
			continue
		}
		if !ok {
			r.cfg.Logf("chaos: draining %s: a message without a chaos number: id %q", queue, d.MessageID)
			r.mu.Lock()
			r.unexpected = append(r.unexpected, fmt.Sprintf("message id %q in %s", d.MessageID, queue))
			r.mu.Unlock()
			continue
		}
		counts[n]++
	}
}

func (r *run) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for _, q := range append([]string{r.cfg.Queue, contract.DeadLetterQueue(r.cfg.Queue), contract.ParkedQueue(r.cfg.Queue)}, r.rungs...) {
		if _, err := r.tr.DeleteQueue(ctx, q); err != nil && !errors.Is(err, transport.ErrNotFound) {
			r.cfg.Logf("chaos: deleting %s: %v", q, err)
		}
	}
}

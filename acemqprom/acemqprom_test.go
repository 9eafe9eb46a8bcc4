package acemqprom_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqprom"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/retry"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
)

// item is a scripted message: the handler does what Do says.
type item struct {
	Do string `json:"do"`
}

// handle accepts, rejects or parks as told; "flaky" fails its first
// attempt only, "retry" fails every attempt until the policy gives up.
func handle(_ context.Context, m acemq.Message[item]) acemq.Decision {
	switch m.Body.Do {
	case "accept":
		return acemq.Accept()
	case "reject":
		return acemq.Reject(errors.New("rejected by the script"))
	case "park":
		return acemq.Park(errors.New("parked by the script"))
	case "flaky":
		if m.Envelope.Attempt < 2 {
			return acemq.Retry(errors.New("flaky, the first time"))
		}
		return acemq.Accept()
	}
	return acemq.Retry(fmt.Errorf("attempt %d failed", m.Envelope.Attempt))
}

// script is what the scenario publishes, by message id; the undecodable
// message and the unroutable one are published apart.
var script = []struct{ id, do string }{
	{"id-accept-1", "accept"}, {"id-accept-2", "accept"}, {"id-reject", "reject"},
	{"id-park", "park"}, {"id-flaky", "flaky"}, {"id-retry", "retry"},
}

const (
	rawID        = "id-undecodable"
	unroutableID = "id-unroutable"
)

// series names one series as sample keys it: the metric's name (without
// the namespace) and its labels, given as name, value pairs.
func series(name string, labels ...string) string {
	var pairs []string
	for i := 0; i < len(labels); i += 2 {
		pairs = append(pairs, fmt.Sprintf("%s=%q", labels[i], labels[i+1]))
	}
	slices.Sort(pairs) // as Gather orders them
	return "acemq_" + name + "{" + strings.Join(pairs, ",") + "}"
}

// sample gathers g: every counter and gauge, and each histogram's count
// (durations themselves vary), by series.
func sample(t *testing.T, g prometheus.Gatherer) map[string]float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			name, v := mf.GetName(), 0.0
			switch {
			case m.Counter != nil:
				v = m.GetCounter().GetValue()
			case m.Gauge != nil:
				v = m.GetGauge().GetValue()
			case m.Histogram != nil:
				name, v = name+"_count", float64(m.GetHistogram().GetSampleCount())
			default:
				t.Fatalf("%s is of an unexpected type", mf.GetName())
			}
			got[name+"{"+strings.Join(labels, ",")+"}"] = v
		}
	}
	return got
}

// check says how a sample differs from what is wanted; "" when it does not.
type check func(got map[string]float64) string

// exactly wants the sample to be want: no series more, none less.
func exactly(want map[string]float64) check {
	return func(got map[string]float64) string {
		var diffs []string
		for _, k := range slices.Sorted(maps.Keys(want)) {
			if v, ok := got[k]; !ok || v != want[k] {
				diffs = append(diffs, fmt.Sprintf("%s = %v (present: %v), want %v", k, v, ok, want[k]))
			}
		}
		for _, k := range slices.Sorted(maps.Keys(got)) {
			if _, ok := want[k]; !ok {
				diffs = append(diffs, fmt.Sprintf("%s = %v, want no such series", k, got[k]))
			}
		}
		return strings.Join(diffs, "\n")
	}
}

// including wants the sample to hold want's series, whatever else it holds.
func including(want map[string]float64) check {
	return func(got map[string]float64) string {
		present := map[string]float64{}
		for k := range want {
			if v, ok := got[k]; ok {
				present[k] = v
			}
		}
		return exactly(want)(present)
	}
}

// eventually scrapes g until c holds, and fails t if it does not within 20
// seconds of real time: settlements are told to the observer after the
// consumer's counts change, so the metrics are waited for themselves.
func eventually(t *testing.T, g prometheus.Gatherer, what string, c check) map[string]float64 {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := sample(t, g)
		diff := c(got)
		if diff == "" {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20s:\n%s", what, diff)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// world is where the scenario runs: conn is observed by the Metrics
// registered with reg, queue exists with nothing consuming it, exchange has
// no binding. advance moves a manual clock on; nil means real time.
type world struct {
	reg      *prometheus.Registry
	conn     *acemq.Conn
	queue    string
	exchange string
	unit     time.Duration // the consumer wait; the rung wait is twice it
	rungs    contract.RungKind
	advance  func(time.Duration)
}

// scenarioPolicy is the scenario's policy: a wait of unit in the consumer,
// then one of twice it on a rung.
func scenarioPolicy(unit time.Duration) acemq.RetryPolicy {
	return acemq.Exponential(3, unit, 0).WithJitter(0).WaitInBrokerFrom(2 * unit)
}

// rungKinds are the kinds of rungs every scenario runs with: the rung depth
// is read from either.
var rungKinds = []contract.RungKind{contract.ContractRungs, contract.AtLeastOnceRungs}

// connectionSeries are the connection metrics in state, before any
// connection event.
func connectionSeries(state string) map[string]float64 {
	want := map[string]float64{}
	for _, s := range []string{"connected", "reconnecting", "blocked", "closed"} {
		want[series("connection_state", "state", s)] = 0
	}
	want[series("connection_state", "state", state)] = 1
	for _, e := range []string{"lost", "recovered", "blocked", "unblocked"} {
		want[series("connection_events_total", "event", e)] = 0
	}
	return want
}

// runScenario publishes the script, an undecodable message and an
// unroutable one, and checks the metrics at each step: on a manual clock
// while two retries wait in the consumer and while one waits on its rung;
// on real time, the rung only (it holds the message for a second, the
// consumer waits too briefly to be caught). Then the consumer and the
// connection close.
func runScenario(t *testing.T, w world) {
	ctx := context.Background()
	q, x := w.queue, w.exchange
	policy := scenarioPolicy(w.unit)
	ladder, err := retry.NewLadder(q, policy, w.rungs)
	if err != nil {
		t.Fatal(err)
	}
	rung := ladder.Queues()[0]
	c, err := acemq.Consume(ctx, w.conn, q, handle, acemq.WithPolicy(policy), acemq.WithRungs(w.rungs))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Close(context.Background()) })
	if _, err := w.conn.Transport().InspectQueue(ctx, rung); err != nil {
		t.Fatalf("the consumer did not declare its rung %s: %v", rung, err)
	}

	err = acemqtest.NewPublisher[item](t, w.conn, x).Publish(ctx, "nowhere", item{Do: "accept"}, acemq.WithMessageID(unroutableID))
	if !errors.Is(err, acemq.ErrUnroutable) {
		t.Fatalf("publishing to %s without a binding: %v, want ErrUnroutable", x, err)
	}
	pub := acemqtest.NewPublisher[item](t, w.conn, "")
	for _, m := range script {
		if err := pub.Publish(ctx, q, item{Do: m.do}, acemq.WithMessageID(m.id)); err != nil {
			t.Fatal(err)
		}
	}
	// Bytes are not JSON: the consumer parks them undecoded.
	if err := acemqtest.NewPublisher[[]byte](t, w.conn, "").Publish(ctx, q, []byte("{not json"), acemq.WithMessageID(rawID)); err != nil {
		t.Fatal(err)
	}

	// Every message's type is its routing key at the first publish: q, or
	// "nowhere" for the unroutable one; republishes keep it. Only the
	// application's publishes are publish_total's (the family's meaning);
	// the library's own are republish_total's, by kind.
	published := func(exchange, routingKey, typ, outcome, class string) string {
		return series("publish_total", "exchange", exchange, "routing_key", routingKey, "message_type", typ,
			"outcome", outcome, "reason_class", class)
	}
	republished := func(routingKey, kind string) string {
		return series("republish_total", "exchange", "", "routing_key", routingKey, "message_type", q,
			"kind", kind, "outcome", "confirmed", "reason_class", "none")
	}
	// pubs are the publishes once dlq, parked, home (back to q after a
	// wait in the consumer) and onRung republishes were made.
	pubs := func(dlq, parked, home, onRung float64) map[string]float64 {
		want := map[string]float64{
			published("", q, q, "confirmed", "none"):                       7,
			published(x, "nowhere", "nowhere", "unroutable", "unroutable"): 1,
			series("publish_duration_seconds_count", "exchange", ""):       7,
			series("publish_duration_seconds_count", "exchange", x):        1,
		}
		for _, r := range []struct {
			rk, kind string
			n        float64
		}{{contract.DeadLetterQueue(q), "set_aside", dlq}, {contract.ParkedQueue(q), "set_aside", parked}, {q, "retry", home}, {rung, "retry", onRung}} {
			if r.n > 0 {
				want[republished(r.rk, r.kind)] = r.n
			}
		}
		return want
	}
	consumed := func(outcome, class string) string {
		return series("consume_total", "queue", q, "message_type", q, "outcome", outcome, "reason_class", class)
	}
	setAsideTo := func(target, class string) string {
		return series("messages_dead_lettered_total", "queue", q, "target", target, "reason_class", class)
	}
	settled := map[string]float64{ // without a retry
		consumed("acked", "none"):                            2,
		consumed("rejected", "rejected"):                     1, // the family's word for a handler's rejection
		consumed("parked", "parked"):                         1,
		consumed("parked", "undecodable"):                    1,
		setAsideTo(contract.DeadLetterQueue(q), "rejected"):  1,
		setAsideTo(contract.ParkedQueue(q), "parked"):        1,
		setAsideTo(contract.ParkedQueue(q), "undecodable"):   1,
		series("consumer_paused", "queue", q, "consumer", q): 0, // running
	}
	waiting := func(where string) string { return series("retry_waiting", "queue", q, "where", where) }
	setAside := func(where string) string { return series("set_aside_messages", "queue", q, "where", where) }
	inFlight, handled := series("consume_in_flight", "queue", q), series("consume_duration_seconds_count", "queue", q)
	attempts := series("consume_attempts_count", "queue", q)
	retriedOnRung := series("messages_retried_total", "queue", q, "rung", rung)
	retriedInConsumer := series("messages_retried_total", "queue", q, "rung", "consumer")

	var want map[string]float64
	if w.advance != nil {
		// "flaky" and "retry" wait in the consumer; the rest is settled
		// (a dead letter and two parked: three republishes).
		want = merge(connectionSeries("connected"), pubs(1, 2, 0, 0), settled, map[string]float64{
			handled: 4, attempts: 5, inFlight: 2, waiting("consumer"): 2, waiting("rung"): 0,
			setAside("dlq"): 1, setAside("parked"): 2,
		})
		eventually(t, w.reg, "two waits in the consumer", exactly(want))

		// Both come back: "flaky" is accepted, "retry" goes to the rung.
		w.advance(w.unit)
		want = merge(want, pubs(1, 2, 2, 1), map[string]float64{
			consumed("acked", "none"):    3,
			consumed("retried", "retry"): 3,
			retriedInConsumer:            2,
			retriedOnRung:                1,
			handled:                      8, attempts: 9, inFlight: 0, waiting("consumer"): 0, waiting("rung"): 1,
		})
		eventually(t, w.reg, "a wait on the rung", exactly(want))
		w.advance(2 * w.unit)
	} else {
		eventually(t, w.reg, "a wait on the rung", including(map[string]float64{retriedOnRung: 1, waiting("rung"): 1}))
	}

	// The rung sends "retry" home for its third and last attempt.
	want = merge(connectionSeries("connected"), pubs(2, 2, 2, 1), settled, map[string]float64{
		consumed("acked", "none"):                            3,
		consumed("retried", "retry"):                         3,
		retriedInConsumer:                                    2,
		retriedOnRung:                                        1,
		consumed("dead_lettered", "exhausted"):               1,
		setAsideTo(contract.DeadLetterQueue(q), "exhausted"): 1,
		handled:  9, // not the undecodable one
		attempts: 10,
		inFlight: 0, waiting("consumer"): 0, waiting("rung"): 0,
		setAside("dlq"): 2, setAside("parked"): 2,
	})
	eventually(t, w.reg, "every message settled", exactly(want))

	if _, err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// No consumer: its queues are no longer read, nor is it paused or not.
	delete(want, series("consumer_paused", "queue", q, "consumer", q))
	delete(want, waiting("rung"))
	delete(want, setAside("dlq"))
	delete(want, setAside("parked"))
	if msg := exactly(want)(sample(t, w.reg)); msg != "" {
		t.Errorf("after the consumer closed:\n%s", msg)
	}
	if err := w.conn.Close(); err != nil {
		t.Fatal(err)
	}
	if msg := exactly(merge(want, connectionSeries("closed")))(sample(t, w.reg)); msg != "" {
		t.Errorf("after the connection closed:\n%s", msg)
	}
	checkLabels(t, w.reg)
}

// checkLabels fails t if a label value is a message id, or looks like free
// text (a reason or an error: they have spaces).
func checkLabels(t *testing.T, g prometheus.Gatherer) {
	t.Helper()
	ids := map[string]bool{rawID: true, unroutableID: true}
	for _, m := range script {
		ids[m.id] = true
	}
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if v := l.GetValue(); ids[v] || strings.ContainsAny(v, " :") {
					t.Errorf("%s has the label %s=%q", mf.GetName(), l.GetName(), v)
				}
			}
		}
	}
}

func merge(ms ...map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for _, m := range ms {
		maps.Copy(out, m)
	}
	return out
}

func newMetrics(t *testing.T) (*prometheus.Registry, *acemqprom.Metrics) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	m, err := acemqprom.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	return reg, m
}

// ordersOnMemory is a memory:// broker with a classic queue "orders", and
// a Conn to it observed by the Metrics registered with reg.
func ordersOnMemory(t *testing.T) (*prometheus.Registry, *acemqtest.Broker, *acemq.Conn) {
	t.Helper()
	reg, m := newMetrics(t)
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t, acemq.WithObserver(m))
	if err := conn.Transport().DeclareQueue(context.Background(), transport.Queue{Name: "orders", Type: transport.Classic, Durable: true}); err != nil {
		t.Fatal(err)
	}
	return reg, b, conn
}

func TestScenarioOnMemory(t *testing.T) {
	for _, kind := range rungKinds {
		t.Run(string(kind), func(t *testing.T) {
			reg, b, conn := ordersOnMemory(t)
			if err := conn.Transport().DeclareExchange(context.Background(), transport.Exchange{Name: "events", Type: transport.Direct, Durable: true}); err != nil {
				t.Fatal(err)
			}
			runScenario(t, world{reg: reg, conn: conn, queue: "orders", exchange: "events", unit: 10 * time.Second, rungs: kind, advance: b.Advance})
		})
	}
}

func TestScenarioOnRabbitMQ(t *testing.T) {
	for _, kind := range rungKinds {
		t.Run(string(kind), func(t *testing.T) { scenarioOnRabbitMQ(t, kind) })
	}
}

func scenarioOnRabbitMQ(t *testing.T, kind contract.RungKind) {
	url := brokertest.URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The queues are declared and removed through a connection of their
	// own: the scenario closes the observed one.
	admin, err := acemq.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	q, x := brokertest.UniqueName(t, "acemqprom"), brokertest.UniqueName(t, "acemqprom.events")
	tr := admin.Transport()
	if err := tr.DeclareQueue(ctx, transport.Queue{Name: q, Type: transport.Classic, Durable: true}); err != nil {
		t.Fatal(err)
	}
	if err := tr.DeclareExchange(ctx, transport.Exchange{Name: x, Type: transport.Direct, Durable: true}); err != nil {
		t.Fatal(err)
	}
	const unit = 500 * time.Millisecond
	ladder, err := retry.NewLadder(q, scenarioPolicy(unit), kind)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, name := range append([]string{contract.DeadLetterQueue(q), contract.ParkedQueue(q)}, ladder.Queues()...) {
			_, _ = tr.DeleteQueue(context.Background(), name)
		}
	})

	reg, m := newMetrics(t)
	conn, err := acemq.Connect(ctx, url, acemq.WithObserver(m))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	runScenario(t, world{reg: reg, conn: conn, queue: q, exchange: x, unit: unit, rungs: kind})
}

// A rung deleted after the consumer declared it: the retry comes back
// unroutable and waits in the consumer, and scrapes count the rung as
// unreadable.
func TestRungMissingOnMemory(t *testing.T) {
	reg, b, conn := ordersOnMemory(t)
	ctx := context.Background()
	policy := acemq.Fixed(2, 20*time.Second).WaitInBrokerFrom(20 * time.Second)
	rung := contract.RungQueue("orders", 20*time.Second, contract.DefaultRungKind)
	c, err := acemq.Consume(ctx, conn, "orders", handle, acemq.WithPolicy(policy))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Close(context.Background()) })
	if _, err := conn.Transport().DeleteQueue(ctx, rung); err != nil {
		t.Fatal(err)
	}
	if err := acemqtest.NewPublisher[item](t, conn, "").Publish(ctx, "orders", item{Do: "retry"}, acemq.WithMessageID("id-retry")); err != nil {
		t.Fatal(err)
	}

	missing := series("retry_rung_missing_total", "queue", "orders", "rung", rung)
	inspectErrors := series("inspect_errors_total", "queue", "orders", "target", rung)
	got := eventually(t, reg, "the retry waiting in the consumer", including(map[string]float64{
		missing: 1,
		series("republish_total", "exchange", "", "routing_key", rung, "message_type", "orders", "kind", "retry", "outcome", "unroutable", "reason_class", "unroutable"): 1,
		series("retry_waiting", "queue", "orders", "where", "consumer"): 1,
	}))
	if _, ok := got[series("retry_waiting", "queue", "orders", "where", "rung")]; ok {
		t.Errorf("a queue whose only rung is missing reports %v on its rungs, want no series", got)
	}
	if again := sample(t, reg); again[inspectErrors] != got[inspectErrors]+1 || got[inspectErrors] < 1 {
		t.Errorf("%s went from %v to %v over one scrape, want one more each", inspectErrors, got[inspectErrors], again[inspectErrors])
	}

	b.Advance(20 * time.Second)
	eventually(t, reg, "the dead letter", including(map[string]float64{
		series("consume_total", "queue", "orders", "message_type", "orders", "outcome", "retried", "reason_class", "retry"):           1,
		series("consume_total", "queue", "orders", "message_type", "orders", "outcome", "dead_lettered", "reason_class", "exhausted"): 1,
		series("messages_retried_total", "queue", "orders", "rung", "consumer"):                                                       1,
		series("retry_waiting", "queue", "orders", "where", "consumer"):                                                               0,
		missing: 1,
	}))
	checkLabels(t, reg)
}

// The connection state follows the events, whichever order the transport
// reports a loss of a blocked connection in, and for as many connections as
// the transport has lost.
func TestConnectionState(t *testing.T) {
	reg, m := newMetrics(t)
	expect := func(state string, lost, recovered, blocked, unblocked int) {
		t.Helper()
		var want strings.Builder
		want.WriteString(`# HELP acemq_connection_events_total Connection events: lost, recovered (after a loss), blocked and unblocked (by a broker resource alarm).
# TYPE acemq_connection_events_total counter
`)
		fmt.Fprintf(&want, "acemq_connection_events_total{event=\"blocked\"} %d\nacemq_connection_events_total{event=\"lost\"} %d\n", blocked, lost)
		fmt.Fprintf(&want, "acemq_connection_events_total{event=\"recovered\"} %d\nacemq_connection_events_total{event=\"unblocked\"} %d\n", recovered, unblocked)
		want.WriteString(`# HELP acemq_connection_state The connection's state: 1 for the state it is in (connected, reconnecting, blocked, closed), 0 for the others.
# TYPE acemq_connection_state gauge
`)
		for _, s := range []string{"blocked", "closed", "connected", "reconnecting"} {
			v := 0
			if s == state {
				v = 1
			}
			fmt.Fprintf(&want, "acemq_connection_state{state=%q} %d\n", s, v)
		}
		if err := testutil.GatherAndCompare(reg, strings.NewReader(want.String()), "acemq_connection_state", "acemq_connection_events_total"); err != nil {
			t.Error(err)
		}
	}
	event := func(k acemq.EventKind) { m.Event(acemq.Event{Kind: k}) }

	expect("connected", 0, 0, 0, 0)
	event(acemq.EventConnectionBlocked)
	expect("blocked", 0, 0, 1, 0)
	event(acemq.EventConnectionLost)
	expect("reconnecting", 1, 0, 1, 0)
	event(acemq.EventConnectionUnblocked) // the lost connection's alarm is over
	expect("reconnecting", 1, 0, 1, 1)
	event(acemq.EventConnectionRecovered)
	expect("connected", 1, 1, 1, 1)
	// transport/rabbitmq's two connections (the main and the publishing
	// one), both lost: reconnecting until both have recovered.
	event(acemq.EventConnectionLost)
	event(acemq.EventConnectionLost)
	event(acemq.EventConnectionRecovered)
	expect("reconnecting", 3, 2, 1, 1)
	event(acemq.EventConnectionRecovered)
	expect("connected", 3, 3, 1, 1)
	event(acemq.EventConnectionClosed)
	expect("closed", 3, 3, 1, 1)
}

// connectionEvents are connectionSeries with the events counted so far.
func connectionEvents(state string, lost, recovered, blocked, unblocked float64) map[string]float64 {
	return merge(connectionSeries(state), map[string]float64{
		series("connection_events_total", "event", "lost"):      lost,
		series("connection_events_total", "event", "recovered"): recovered,
		series("connection_events_total", "event", "blocked"):   blocked,
		series("connection_events_total", "event", "unblocked"): unblocked,
	})
}

// A Conn's own events on memory://: blocked by an alarm, then lost (a
// connection exception) while blocked, recovered at once, then closed. The
// broker is RabbitMQ 3.10's, which raises one for an unknown exchange type
// (4.0 closes only the channel).
func TestConnectionEventsOnMemory(t *testing.T) {
	reg, m := newMetrics(t)
	b := acemqtest.NewBroker(t, memory.WithRabbitMQVersion("3.10"))
	conn := b.Connect(t, acemq.WithObserver(m))
	ctx := context.Background()
	if err := conn.Transport().DeclareQueue(ctx, transport.Queue{Name: "orders", Type: transport.Classic, Durable: true}); err != nil {
		t.Fatal(err)
	}

	b.SetAlarm("memory low")
	cut, cancel := context.WithCancel(ctx)
	cancel()
	if err := acemqtest.NewPublisher[item](t, conn, "").Publish(cut, "orders", item{Do: "accept"}); !errors.Is(err, acemq.ErrBlocked) {
		t.Fatalf("a publish during the alarm: %v, want ErrBlocked", err)
	}
	eventually(t, reg, "blocked", including(connectionEvents("blocked", 0, 0, 1, 0)))

	// An exchange type the broker does not know is a connection exception.
	if err := conn.Transport().DeclareExchange(ctx, transport.Exchange{Name: "x", Type: "x-delayed-message"}); err == nil {
		t.Fatal("declaring an exchange of an unknown type succeeded")
	}
	eventually(t, reg, "lost and recovered", including(connectionEvents("connected", 1, 1, 1, 1)))
	b.ClearAlarm()

	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, reg, "closed", including(connectionEvents("closed", 1, 1, 1, 1)))
}

// A connection the broker closes is counted lost, then recovered.
func TestConnectionLostOnRabbitMQ(t *testing.T) {
	url := brokertest.URL(t)
	name := brokertest.UniqueName(t, "acemqprom.conn")
	reg, m := newMetrics(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := acemq.Connect(ctx, url, acemq.WithObserver(m), acemq.WithConnectionName(name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })

	brokertest.CloseConnections(t, name)
	eventually(t, reg, "lost and recovered", including(connectionEvents("connected", 1, 1, 0, 0)))
	if st := conn.Transport().State(); !st.Connected || st.Connects != 2 {
		t.Errorf("the transport is %+v, want connected, on its second connection", st)
	}
}

// An option out of range is New's error naming it, not Prometheus's panic.
func TestOptionsOutOfRangeAreErrors(t *testing.T) {
	for _, opt := range []acemqprom.Option{acemqprom.WithBuckets(0.1, 1, 1), acemqprom.WithBuckets(1, 0.5), nil} {
		if m, err := acemqprom.New(prometheus.NewRegistry(), opt); err == nil || !strings.HasPrefix(err.Error(), "acemqprom: ") {
			t.Errorf("New = %v, %v; want an error", m, err)
		}
	}
	_, err := acemqprom.New(prometheus.NewRegistry(), acemqprom.WithBuckets(1, 0.5))
	if want := "acemqprom: WithBuckets: the bounds must increase, but 0.5 follows 1"; err == nil || err.Error() != want {
		t.Errorf("New(WithBuckets(1, 0.5)) = %v; want %q", err, want)
	}
}

// Metrics clash with metrics of the same names, not with those of another
// namespace or of another connection's label.
func TestRegistration(t *testing.T) {
	reg, _ := newMetrics(t)
	if _, err := acemqprom.New(reg); err == nil {
		t.Error("a second New on the same registry succeeded")
	}
	if _, err := acemqprom.New(reg, acemqprom.WithNamespace("shop"), acemqprom.WithBuckets(0.01, 0.1, 1)); err != nil {
		t.Errorf("another namespace: %v", err)
	}
	if n, err := testutil.GatherAndCount(reg, "shop_connection_state"); err != nil || n != 4 {
		t.Errorf("shop_connection_state has %d series (%v), want 4", n, err)
	}
	// Series of one name all have the same labels: the label that tells
	// Conns apart goes on every Metrics of the registry.
	conns := prometheus.NewPedanticRegistry()
	for _, name := range []string{"orders", "billing"} {
		if _, err := acemqprom.New(prometheus.WrapRegistererWith(prometheus.Labels{"conn": name}, conns)); err != nil {
			t.Errorf("the connection %s: %v", name, err)
		}
	}
	if n, err := testutil.GatherAndCount(conns, "acemq_connection_state"); err != nil || n != 8 {
		t.Errorf("acemq_connection_state has %d series (%v), want 4 for each of two", n, err)
	}
	if _, err := acemqprom.New(nil); err == nil {
		t.Error("New(nil) succeeded")
	}
}

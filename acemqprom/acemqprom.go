// Package acemqprom keeps Prometheus metrics of what an acemq Conn does, by
// the names the AceMQ family shares (CONTRACT.md section 17): it is an
// acemq.Observer (and an acemq.RequestObserver, for package request, and an
// acemq.PipelineObserver, for package pipeline), and a
// prometheus.Collector that New registers.
//
//	reg := prometheus.NewRegistry()
//	m, err := acemqprom.New(reg)
//	conn, err := acemq.Connect(ctx, url, acemq.WithObserver(m))
//
// The metrics (contract.Metrics: the family's names, dots turned to
// underscores, durations in seconds, counters ending in _total), under the
// namespace "acemq" unless WithNamespace says otherwise:
//
//	acemq_publish_total{exchange,routing_key,message_type,outcome,reason_class}       counter
//	acemq_publish_duration_seconds{exchange}                                          histogram
//	acemq_consume_total{queue,message_type,outcome,reason_class}                      counter
//	acemq_consume_duration_seconds{queue}                                             histogram
//	acemq_consume_attempts{queue}                                                     histogram
//	acemq_consume_in_flight{queue}                                                    gauge
//	acemq_messages_retried_total{queue,rung}                                          counter
//	acemq_messages_dead_lettered_total{queue,target,reason_class}                     counter
//	acemq_messages_set_aside_failed_total{queue,target}                               counter
//	acemq_retry_rung_missing_total{queue,rung}                                        counter
//	acemq_request_total{exchange,routing_key,outcome}                                 counter
//	acemq_request_duration_seconds{exchange,routing_key,outcome}                      histogram
//	acemq_outbox_total{outcome}                                                       counter
//	acemq_outbox_lag_seconds                                                          gauge
//	acemq_pipeline_run_total{pipeline,step,outcome}                                   counter
//	acemq_pipeline_run_duration_seconds{pipeline,step,outcome}                        histogram
//
// and this library's own, which the family lacks:
//
//	acemq_republish_total{exchange,routing_key,message_type,kind,outcome,reason_class} counter
//	acemq_retry_waiting{queue,where}                                                  gauge
//	acemq_set_aside_messages{queue,where}                                             gauge
//	acemq_inspect_errors_total{queue,target}                                          counter
//	acemq_connection_state{state}                                                     gauge
//	acemq_connection_events_total{event}                                              counter
//	acemq_handler_timeouts_total{queue}                                               counter
//	acemq_handler_overrunning{queue}                                                  gauge
//	acemq_consumer_paused{queue,consumer}                                             gauge
//	acemq_circuit_breaker_state{queue,consumer,state}                                 gauge
//	acemq_circuit_breaker_transitions_total{queue,consumer,state}                     counter
//
// outcome is the family's word (contract.TelemetryOutcome): publish
// confirmed, unroutable or failed; consume acked, retried, rejected,
// dead_lettered, parked or in_progress; request answered, timed_out or
// failed; an outbox record's publish published or failed; a pipeline run
// completed or ended_early. reason_class keeps what the family's word
// folds away: a delivery's contract.ReasonClass ("none" when acked), a
// publish's finer contract.PublishOutcome (refused, timed_out...; "none"
// when confirmed). publish_total and publish_duration_seconds are the
// application's publishes only, as the family counts them; the library's
// own republishes are republish_total's, kind saying why
// (contract.RepublishKind: retry, set_aside, put_back, replay,
// schedule_hop, schedule_delivery). rung is
// the rung's queue, or "consumer" for a retry held in the consumer; target
// is Q.dlq or Q.parked.
//
// Labels are names of exchanges, routing keys, message types and queues
// and a few fixed words; a message id, an error or a reason's text never
// becomes one, so that the number of series stays bounded as long as the
// routing keys and types are a bounded set. The default exchange is
// exchange="".
//
// retry_waiting{where="rung"} and set_aside_messages (where="dlq" for Q.dlq,
// "parked" for Q.parked) are read from the broker at each scrape: one
// passive queue declaration per rung, dead-letter and parked queue of each
// queue consumed, at most two seconds for them all; a queue that cannot be
// read is left out and counted in inspect_errors_total. The rungs are those
// of the consumer's ladder, of whichever kind it uses; what they count is
// ready messages, so a message an at-least-once rung has dead-lettered but
// not yet seen confirmed home (the management API's messages_dlx) is not
// among them.
//
// The outbox's metrics are those of the relays (package outbox's
// *outbox.Relay, an OutboxRelay) given to WatchOutbox, read at each
// scrape: outbox_total sums their Publishes, a publish published when the
// record was confirmed and marked, failed for every failed publish, counted
// towards the record's attempts or not (the broker never answered);
// outbox_lag_seconds is the age of the oldest unpublished record of their
// tables (OldestPending, within the same two seconds as the queues), 0 when
// all are published. A relay whose table
// cannot be read is left out of the lag and counted in
// inspect_errors_total{queue="",target=<the relay's name>}. The relays'
// publishes are publishes of their Conn too, in publish_total.
//
// One Metrics is meant for one Conn: connection_state is that of the Conn
// it observes, "connected" until an event says otherwise (Connect returns
// a Conn only once connected). For several Conns, give each its own Metrics
// and tell them apart with a constant label, on every one of them (series
// of one name must all have the same labels); the family's transport tag
// is added the same way:
//
//	m, err := acemqprom.New(prometheus.WrapRegistererWith(prometheus.Labels{"conn": "orders", "transport": "rabbitmq"}, reg))
package acemqprom

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/kept"
	"github.com/acemq-go/acemq/internal/option"
)

// DefaultNamespace prefixes every metric's name unless WithNamespace says
// otherwise.
const DefaultNamespace = "acemq"

// inspectTimeout bounds the rung inspections and the outbox lags of one
// scrape, all of them together, so that a slow or reconnecting broker, or a
// slow database, cannot hold a scrape up.
const inspectTimeout = 2 * time.Second

// Option configures New; one whose value is out of range is New's error.
type Option func(*options) error

type options struct {
	namespace string
	buckets   []float64
}

// WithNamespace prefixes the metrics' names with ns instead of
// DefaultNamespace ("" for no prefix).
func WithNamespace(ns string) Option { return func(o *options) error { o.namespace = ns; return nil } }

// WithBuckets sets the upper bounds, in seconds, of the buckets of the
// publish and handler duration histograms (none: prometheus.DefBuckets).
// They must increase, which Prometheus would otherwise enforce by a panic.
func WithBuckets(b ...float64) Option {
	return func(o *options) error {
		for i := 1; i < len(b); i++ {
			if !(b[i] > b[i-1]) {
				return fmt.Errorf("WithBuckets: the bounds must increase, but %v follows %v", b[i], b[i-1])
			}
		}
		o.buckets = slices.Clone(b)
		return nil
	}
}

// Metrics is an acemq.Observer that keeps Prometheus metrics (see the
// package documentation), and the prometheus.Collector of them. Make one
// with New.
type Metrics struct {
	publishes       *prometheus.CounterVec
	republishes     *prometheus.CounterVec
	publishDuration *prometheus.HistogramVec
	consumes        *prometheus.CounterVec
	consumeDuration *prometheus.HistogramVec
	attempts        *prometheus.HistogramVec
	inFlight        *prometheus.GaugeVec
	queues          kept.Map[string, *queueSeries] // those three by queue (kept.go)
	retried         *prometheus.CounterVec
	deadLettered    *prometheus.CounterVec
	setAsideFail    *prometheus.CounterVec
	rungMissing     *prometheus.CounterVec
	requests        *prometheus.CounterVec
	requestDuration *prometheus.HistogramVec
	runs            *prometheus.CounterVec
	runDuration     *prometheus.HistogramVec
	// waiting holds the consumer waits (where="consumer"); the rung waits
	// of the same metric are read from the broker at each scrape.
	waiting      *prometheus.GaugeVec
	rungDesc     *prometheus.Desc
	setAsideDesc *prometheus.Desc
	inspectFails *prometheus.CounterVec
	connDesc     *prometheus.Desc
	connEvents   *prometheus.CounterVec
	timeouts     *prometheus.CounterVec
	overrunning  *prometheus.GaugeVec
	paused       *prometheus.GaugeVec // consumers.go
	outboxDesc   *prometheus.Desc
	lagDesc      *prometheus.Desc
	breakers     breakerMetrics

	mu      sync.Mutex
	watched map[string]*watch // by source queue
	relays  []OutboxRelay     // WatchOutbox's
	// conn is read at each scrape, so that the one-hot series of
	// connection_state always agree.
	conn connState
}

// watch is a source queue whose rungs are read at each scrape: its ladder,
// and the Conns that consume it (a consumer started on each), any of which
// can inspect the rungs.
type watch struct {
	rungs []string
	conns []*acemq.Conn
}

// connState is what the connection events said last; lost, blocked and
// closed are kept apart because the transport reports a blocked connection
// that is lost as lost then unblocked, while it is still reconnecting.
// lost counts the connections lost and not recovered yet: transport/rabbitmq
// has two (the main one and the publishing one), each reporting its own.
type connState struct {
	lost            int
	blocked, closed bool
}

func (s connState) String() string {
	switch {
	case s.closed:
		return "closed"
	case s.lost > 0:
		return "reconnecting"
	case s.blocked:
		return "blocked"
	}
	return "connected"
}

var (
	connStates = []string{"connected", "reconnecting", "blocked", "closed"}
	connEvents = map[acemq.EventKind]string{
		acemq.EventConnectionLost:      "lost",
		acemq.EventConnectionRecovered: "recovered",
		acemq.EventConnectionBlocked:   "blocked",
		acemq.EventConnectionUnblocked: "unblocked",
	}
	// attemptBuckets are the upper bounds of consume_attempts' buckets.
	attemptBuckets = []float64{1, 2, 3, 5, 8, 13, 21}
)

// help is each metric's help text.
var help = map[string]string{
	contract.MetricPublishTotal:              "The application's publishes by how they ended (outcome: confirmed, unroutable, failed; reason_class: refused, timed_out, failed, unroutable, none); the library's own republishes are in republish_total.",
	contract.MetricPublishDuration:           "Time from an application's publish to the broker's answer, whatever it was, in seconds.",
	contract.MetricRepublishTotal:            "The library's own republishes (kind: retry, set_aside, put_back, replay, schedule_hop, schedule_delivery) by how they ended, as publish_total.",
	contract.MetricConsumeTotal:              "Deliveries settled, by outcome (acked, retried, rejected by the handler, dead_lettered, parked, in_progress: back on its queue) and by the kind of reason (none when acked).",
	contract.MetricConsumeDuration:           "Time the handler ran on a delivery, in seconds; deliveries it never saw (undecodable ones, those handed back at shutdown) are left out.",
	contract.MetricConsumeAttempts:           "The attempt of each delivery settled (x-acemq-attempt, from 1).",
	contract.MetricConsumeInFlight:           "Deliveries received and not yet settled, those waiting in the consumer included.",
	contract.MetricMessagesRetried:           "Retries, by rung: the rung's queue, or consumer for a wait held in the consumer.",
	contract.MetricMessagesDeadLettered:      "Messages set aside, in the dead-letter queue or the parked queue (target), by the kind of reason.",
	contract.MetricSetAsideFailed:            "Messages that could not be set aside in their dead-letter or parked queue (target) and went back to their queue.",
	contract.MetricRungMissing:               "Retries meant for a rung that waited in the consumer instead, because the rung was missing or returned the message.",
	contract.MetricRequestTotal:              "Requests (package request) by how they ended: answered, timed_out, failed.",
	contract.MetricRequestDuration:           "Time from a request to its reply or its failure, in seconds.",
	contract.MetricPipelineRunTotal:          "Pipeline runs that ended at a step of this process: completed (the last step done) or ended_early (a step returned End).",
	contract.MetricPipelineRunDuration:       "Time from a pipeline run's start (its message's x-acemq-first-seen) to its end at a step of this process, in seconds.",
	contract.MetricRetryWaiting:              "Messages waiting for a retry: where=\"consumer\" held in the consumer now; where=\"rung\" on the queue's retry rungs, read from the broker at scrape time.",
	contract.MetricSetAsideMessages:          "Messages in a consumed queue's dead-letter queue (where=\"dlq\") and parked queue (where=\"parked\"), read from the broker at scrape time.",
	contract.MetricOutboxTotal:               "Publishes of outbox records by the relays watched: published (confirmed and marked) or failed (every failed publish, counted towards the record's attempts or not).",
	contract.MetricOutboxLag:                 "Age of the oldest unpublished record (given up or not) of the watched relays' outboxes, in seconds, 0 when all are published; read from their tables at scrape time.",
	contract.MetricInspectErrors:             "Scrapes that could not read the depth of a queue's rung, dead-letter or parked queue (target: missing, or the broker did not answer in time), or an outbox relay's lag (queue empty, target the relay's name); it was left out.",
	contract.MetricConnectionState:           "The connection's state: 1 for the state it is in (connected, reconnecting, blocked, closed), 0 for the others.",
	contract.MetricConnectionEvents:          "Connection events: lost, recovered (after a loss), blocked and unblocked (by a broker resource alarm).",
	contract.MetricHandlerTimeouts:           "Handlers that ran past their timeout (acemq.WithHandlerTimeout); each delivery was retried at the timeout, reason_class timeout.",
	contract.MetricHandlerOverrunning:        "Handlers still running past their timeout, each holding one of its consumer's goroutines until it returns (its decision then discarded).",
	contract.MetricConsumerPaused:            "1 while the consumer (its id) is paused, by an operator or its circuit breaker, 0 while it runs: paused, not failing.",
	contract.MetricCircuitBreakerState:       "The state of a consumer's circuit breaker: 1 for the state it is in (closed, open, half-open), 0 for the others; no series before its first transition.",
	contract.MetricCircuitBreakerTransitions: "Transitions of a consumer's circuit breaker, by the state entered (open: it tripped; half-open: probing; closed: the probe succeeded).",
}

// builder makes the metrics of contract.Metrics, named and labelled as it
// says, under a namespace.
type builder struct {
	ns      string
	buckets []float64
	byName  map[string]contract.Metric
}

// name is m's name in Prometheus, and its labels.
func (b builder) name(metric string) (string, []string) {
	m, ok := b.byName[metric]
	if !ok {
		panic("acemqprom: " + metric + " is not among contract.Metrics")
	}
	labels := make([]string, len(m.Tags))
	for i, t := range m.Tags {
		labels[i] = contract.PrometheusLabel(t)
	}
	rest := strings.TrimPrefix(m.Prometheus(), contract.PrometheusLabel(contract.MetricPrefix))
	return prometheus.BuildFQName(b.ns, "", rest), labels
}

func (b builder) counter(metric string) *prometheus.CounterVec {
	name, labels := b.name(metric)
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help[metric]}, labels)
}

func (b builder) gauge(metric string) *prometheus.GaugeVec {
	name, labels := b.name(metric)
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help[metric]}, labels)
}

// histogram has the durations' buckets, or buckets for counts.
func (b builder) histogram(metric string, buckets []float64) *prometheus.HistogramVec {
	name, labels := b.name(metric)
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help[metric], Buckets: buckets}, labels)
}

func (b builder) desc(metric string) *prometheus.Desc {
	name, labels := b.name(metric)
	return prometheus.NewDesc(name, help[metric], labels, nil)
}

// New returns an observer whose metrics are registered with reg (a
// prometheus.NewRegistry(), or prometheus.DefaultRegisterer); it fails if
// they clash with metrics registered there already. Pass it to
// acemq.WithObserver.
func New(reg prometheus.Registerer, opts ...Option) (*Metrics, error) {
	if reg == nil {
		return nil, errors.New("acemqprom: the Registerer is nil")
	}
	o := options{namespace: DefaultNamespace, buckets: prometheus.DefBuckets}
	if err := option.ApplyFuncs(&o, opts); err != nil {
		return nil, fmt.Errorf("acemqprom: %w", err)
	}
	b := builder{ns: o.namespace, buckets: o.buckets, byName: map[string]contract.Metric{}}
	for _, m := range contract.Metrics() {
		b.byName[m.Name] = m
	}
	m := &Metrics{
		publishes:       b.counter(contract.MetricPublishTotal),
		republishes:     b.counter(contract.MetricRepublishTotal),
		publishDuration: b.histogram(contract.MetricPublishDuration, o.buckets),
		consumes:        b.counter(contract.MetricConsumeTotal),
		consumeDuration: b.histogram(contract.MetricConsumeDuration, o.buckets),
		attempts:        b.histogram(contract.MetricConsumeAttempts, attemptBuckets),
		inFlight:        b.gauge(contract.MetricConsumeInFlight),
		retried:         b.counter(contract.MetricMessagesRetried),
		deadLettered:    b.counter(contract.MetricMessagesDeadLettered),
		setAsideFail:    b.counter(contract.MetricSetAsideFailed),
		rungMissing:     b.counter(contract.MetricRungMissing),
		requests:        b.counter(contract.MetricRequestTotal),
		requestDuration: b.histogram(contract.MetricRequestDuration, o.buckets),
		runs:            b.counter(contract.MetricPipelineRunTotal),
		runDuration:     b.histogram(contract.MetricPipelineRunDuration, o.buckets),
		waiting:         b.gauge(contract.MetricRetryWaiting),
		rungDesc:        b.desc(contract.MetricRetryWaiting),
		setAsideDesc:    b.desc(contract.MetricSetAsideMessages),
		inspectFails:    b.counter(contract.MetricInspectErrors),
		connDesc:        b.desc(contract.MetricConnectionState),
		connEvents:      b.counter(contract.MetricConnectionEvents),
		timeouts:        b.counter(contract.MetricHandlerTimeouts),
		overrunning:     b.gauge(contract.MetricHandlerOverrunning),
		paused:          b.gauge(contract.MetricConsumerPaused),
		outboxDesc:      b.desc(contract.MetricOutboxTotal),
		lagDesc:         b.desc(contract.MetricOutboxLag),
		breakers:        newBreakerMetrics(b),
		watched:         map[string]*watch{},
	}
	m.queues.Limit = maxKept
	// Known label values start at 0, so that their series exist and rate()
	// sees the first event.
	for _, e := range connEvents {
		m.connEvents.WithLabelValues(e)
	}
	if err := reg.Register(m); err != nil {
		return nil, err
	}
	return m, nil
}

// vecs are the metrics kept as events come, collected as they are.
func (m *Metrics) vecs() []prometheus.Collector {
	return []prometheus.Collector{m.publishes, m.republishes, m.publishDuration, m.consumes, m.consumeDuration, m.attempts, m.inFlight,
		m.retried, m.deadLettered, m.setAsideFail, m.rungMissing, m.requests, m.requestDuration, m.runs, m.runDuration, m.waiting, m.connEvents,
		m.timeouts, m.overrunning, m.paused, m.breakers.state, m.breakers.transitions}
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range m.vecs() {
		c.Describe(ch)
	}
	ch <- m.rungDesc
	ch <- m.setAsideDesc
	m.inspectFails.Describe(ch)
	ch <- m.connDesc
	ch <- m.outboxDesc
	ch <- m.lagDesc
}

// Collect implements prometheus.Collector: the metrics kept so far, the
// messages on the rungs of every queue consumed, read from the broker now,
// and the watched relays' counts and lag.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	for _, c := range m.vecs() {
		c.Collect(ch)
	}
	m.mu.Lock()
	state := m.conn.String()
	m.mu.Unlock()
	for _, st := range connStates {
		v := 0.0
		if st == state {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(m.connDesc, prometheus.GaugeValue, v, st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), inspectTimeout)
	defer cancel()
	m.collectRungs(ctx, ch)
	m.collectOutboxes(ctx, ch)
	// After the inspections, so that this scrape counts its own failures.
	m.inspectFails.Collect(ch)
}

// collectRungs reports, for each queue consumed, the messages on its rungs
// and in its dead-letter and parked queues. A queue that cannot be
// inspected is left out and counted; a sum none of whose queues could be
// read is not reported, rather than reported 0.
func (m *Metrics) collectRungs(ctx context.Context, ch chan<- prometheus.Metric) {
	type target struct {
		queue string
		rungs []string
		conn  *acemq.Conn
	}
	m.mu.Lock()
	targets := make([]target, 0, len(m.watched))
	for q, w := range m.watched {
		targets = append(targets, target{q, w.rungs, w.conns[len(w.conns)-1]})
	}
	m.mu.Unlock()

	for _, t := range targets {
		// A Conn reconnecting would keep every inspection waiting until
		// the timeout: the queues are counted as unreadable at once.
		connected := t.conn.State().Connected
		depth := func(queues ...string) (sum float64, ok bool) {
			for _, q := range queues {
				if connected {
					if st, err := t.conn.InspectQueue(ctx, q); err == nil {
						sum += float64(st.Messages)
						ok = true
						continue
					}
				}
				m.inspectFails.WithLabelValues(t.queue, q).Inc()
			}
			return sum, ok
		}
		if n, ok := depth(t.rungs...); ok {
			ch <- prometheus.MustNewConstMetric(m.rungDesc, prometheus.GaugeValue, n, t.queue, "rung")
		}
		if n, ok := depth(contract.DeadLetterQueue(t.queue)); ok {
			ch <- prometheus.MustNewConstMetric(m.setAsideDesc, prometheus.GaugeValue, n, t.queue, "dlq")
		}
		if n, ok := depth(contract.ParkedQueue(t.queue)); ok {
			ch <- prometheus.MustNewConstMetric(m.setAsideDesc, prometheus.GaugeValue, n, t.queue, "parked")
		}
	}
}

// PublishStart implements acemq.Observer; it changes nothing.
func (m *Metrics) PublishStart(ctx context.Context, _ *acemq.PublishInfo) context.Context { return ctx }

// PublishEnd implements acemq.Observer: it counts the application's
// publish by its outcome and records its duration, or counts the library's
// republish by its kind.
func (m *Metrics) PublishEnd(_ context.Context, p *acemq.PublishInfo, r acemq.PublishResult) {
	class := contract.TagNone
	if r.Outcome != contract.PublishConfirmed {
		class = string(r.Outcome)
	}
	outcome := string(r.Outcome.Telemetry())
	if p.Republish {
		m.republishes.WithLabelValues(p.Exchange, p.RoutingKey, p.Type, string(p.RepublishKind), outcome, class).Inc()
		return
	}
	m.publishes.WithLabelValues(p.Exchange, p.RoutingKey, p.Type, outcome, class).Inc()
	m.publishDuration.WithLabelValues(p.Exchange).Observe(r.Duration.Seconds())
}

// DeliveryStart implements acemq.Observer: the delivery is in flight.
func (m *Metrics) DeliveryStart(ctx context.Context, d *acemq.DeliveryInfo) context.Context {
	m.queue(d.Queue).inFlight.Inc()
	return ctx
}

// DeliveryEnd implements acemq.Observer: it counts the settlement, its
// retry or set-aside, and records the delivery's attempt and the handler's
// duration.
//
// The duration is recorded when the handler ran: when HandlerDuration is
// above 0, or when the outcome is the handler's decision (anything but a
// requeue or an undecodable body), even at 0 (a clock too coarse to see a
// quick handler). A requeue whose HandlerDuration is 0 (handed back at
// shutdown before its handler ran, or after a failed republish of an
// undecodable message) is left out.
func (m *Metrics) DeliveryEnd(_ context.Context, d *acemq.DeliveryInfo, s acemq.SettleResult) {
	q := m.queue(d.Queue)
	q.inFlight.Dec()
	class := string(s.ReasonClass)
	if class == "" {
		class = contract.TagNone
	}
	m.consumes.WithLabelValues(d.Queue, d.Type, string(s.Outcome.Telemetry(s.ReasonClass)), class).Inc()
	q.attempts.Observe(float64(d.Attempt))
	switch s.Outcome {
	case contract.RetriedOnRung:
		m.retried.WithLabelValues(d.Queue, s.Target).Inc()
	case contract.RetriedInConsumer:
		m.retried.WithLabelValues(d.Queue, contract.TagRungConsumer).Inc()
	case contract.DeadLettered, contract.Parked:
		m.deadLettered.WithLabelValues(d.Queue, s.Target, class).Inc()
	}
	if s.HandlerDuration > 0 || s.Outcome != contract.Requeued && s.Outcome != contract.PutBack && s.ReasonClass != contract.ReasonUndecodable {
		q.handlerDurations.Observe(s.HandlerDuration.Seconds())
	}
}

// RequestStart implements acemq.RequestObserver; it changes nothing.
func (m *Metrics) RequestStart(ctx context.Context, _ *acemq.RequestInfo) context.Context { return ctx }

// RequestEnd implements acemq.RequestObserver: it counts the request by its
// outcome and records its duration.
func (m *Metrics) RequestEnd(_ context.Context, r *acemq.RequestInfo, res acemq.RequestResult) {
	m.requests.WithLabelValues(r.Exchange, r.RoutingKey, string(res.Outcome)).Inc()
	m.requestDuration.WithLabelValues(r.Exchange, r.RoutingKey, string(res.Outcome)).Observe(res.Duration.Seconds())
}

// PipelineRunEnd implements acemq.PipelineObserver: it counts the run by
// its outcome and records its duration.
func (m *Metrics) PipelineRunEnd(_ context.Context, r acemq.PipelineRun) {
	m.runs.WithLabelValues(r.Pipeline, r.Step, string(r.Outcome)).Inc()
	m.runDuration.WithLabelValues(r.Pipeline, r.Step, string(r.Outcome)).Observe(r.Duration.Seconds())
}

// Event implements acemq.Observer.
func (m *Metrics) Event(e acemq.Event) {
	m.breakers.event(e)
	switch e.Kind {
	// Only retries: a delivery held before it is handed back after a
	// failed republish is not waiting for a retry.
	case acemq.EventWaitStarted:
		if e.Class.IsRetry() {
			m.waiting.WithLabelValues(e.Queue, "consumer").Inc()
		}
	case acemq.EventWaitEnded:
		if e.Class.IsRetry() {
			m.waiting.WithLabelValues(e.Queue, "consumer").Dec()
		}
	case acemq.EventHandlerTimedOut:
		m.timeouts.WithLabelValues(e.Queue).Inc()
		m.overrunning.WithLabelValues(e.Queue).Inc()
	case acemq.EventHandlerOverran:
		m.overrunning.WithLabelValues(e.Queue).Dec()
	case acemq.EventRungMissing:
		m.rungMissing.WithLabelValues(e.Queue, e.Target).Inc()
	case acemq.EventSetAsideFailed:
		m.setAsideFail.WithLabelValues(e.Queue, e.Target).Inc()
	case acemq.EventConsumerStarted:
		m.watch(e)
		m.consumerEvent(e)
	case acemq.EventConsumerStopped:
		m.unwatch(e.Queue, e.Conn)
		m.consumerEvent(e)
	case acemq.EventConsumerPaused, acemq.EventConsumerResumed:
		m.consumerEvent(e)
	case acemq.EventConnectionLost, acemq.EventConnectionRecovered, acemq.EventConnectionBlocked,
		acemq.EventConnectionUnblocked, acemq.EventConnectionClosed:
		m.connectionEvent(e)
	}
}

// watch has the rungs of a consumer's queue read at each scrape.
func (m *Metrics) watch(e acemq.Event) {
	if e.Conn == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	w := m.watched[e.Queue]
	if w == nil {
		w = &watch{rungs: e.Rungs}
		m.watched[e.Queue] = w
	}
	w.conns = append(w.conns, e.Conn)
}

// unwatch forgets a consumer of queue on conn ("" for every queue, as when
// conn closes); a queue no consumer is left on is no longer read.
func (m *Metrics) unwatch(queue string, conn *acemq.Conn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for q, w := range m.watched {
		if queue != "" && q != queue {
			continue
		}
		for i := len(w.conns) - 1; i >= 0; i-- {
			if w.conns[i] == conn {
				w.conns = slices.Delete(w.conns, i, i+1)
				if queue != "" {
					break // one consumer stopped
				}
			}
		}
		if len(w.conns) == 0 {
			delete(m.watched, q)
		}
	}
}

func (m *Metrics) connectionEvent(e acemq.Event) {
	if name, ok := connEvents[e.Kind]; ok {
		m.connEvents.WithLabelValues(name).Inc()
	}
	if e.Kind == acemq.EventConnectionClosed {
		m.unwatch("", e.Conn) // its rungs can no longer be read
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch e.Kind {
	case acemq.EventConnectionLost:
		m.conn.lost++
	case acemq.EventConnectionRecovered:
		m.conn.lost = max(m.conn.lost-1, 0)
	case acemq.EventConnectionBlocked:
		m.conn.blocked = true
	case acemq.EventConnectionUnblocked:
		m.conn.blocked = false
	case acemq.EventConnectionClosed:
		m.conn.closed = true
	}
}

var (
	_ acemq.Observer         = (*Metrics)(nil)
	_ acemq.RequestObserver  = (*Metrics)(nil)
	_ acemq.PipelineObserver = (*Metrics)(nil)
)

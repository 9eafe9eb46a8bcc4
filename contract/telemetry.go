package contract

import (
	"slices"
	"strings"
)

// Telemetry names (section 17): the metrics, their tags and outcome words,
// and the spans' attributes, as every library of the family writes them, so
// that one Prometheus, one tracing backend and one set of dashboards serve
// them all.

// The family's metrics, by their OpenTelemetry-style names; Prometheus
// shows them as Metric.Prometheus renders them.
const (
	MetricPublishTotal         = "acemq.publish.total"
	MetricPublishDuration      = "acemq.publish.duration"
	MetricConsumeTotal         = "acemq.consume.total"
	MetricConsumeDuration      = "acemq.consume.duration"
	MetricConsumeAttempts      = "acemq.consume.attempts"
	MetricConsumeInFlight      = "acemq.consume.in.flight"
	MetricMessagesRetried      = "acemq.messages.retried.total"
	MetricMessagesDeadLettered = "acemq.messages.dead.lettered.total"
	MetricSetAsideFailed       = "acemq.messages.set.aside.failed"
	MetricRungMissing          = "acemq.retry.rung.missing"
	MetricRequestTotal         = "acemq.request.total"
	MetricRequestDuration      = "acemq.request.duration"
	MetricOutboxTotal          = "acemq.outbox.total"
	MetricOutboxLag            = "acemq.outbox.lag"
	MetricPipelineRunTotal     = "acemq.pipeline.run.total"
	MetricPipelineRunDuration  = "acemq.pipeline.run.duration"
)

// This library's own metrics, which the family lacks, named in its style.
const (
	// MetricRepublishTotal counts the library's own republishes (a
	// RepublishKind), which the family's acemq.publish.total leaves out:
	// it counts the application's publishes only.
	MetricRepublishTotal   = "acemq.republish.total"
	MetricRetryWaiting     = "acemq.retry.waiting"
	MetricSetAsideMessages = "acemq.set.aside.messages"
	MetricInspectErrors    = "acemq.inspect.errors.total"
	// MetricConsumerPaused is 1 while a consumer is paused (by an
	// operator or its circuit breaker), 0 while it runs: paused, not
	// failing.
	MetricConsumerPaused   = "acemq.consumer.paused"
	MetricConnectionState  = "acemq.connection.state"
	MetricConnectionEvents = "acemq.connection.events.total"
	// MetricHandlerTimeouts counts handlers that ran past their timeout
	// (their deliveries retried); MetricHandlerOverrunning is how many of
	// them still run, each holding a consumer's goroutine.
	MetricHandlerTimeouts    = "acemq.handler.timeouts.total"
	MetricHandlerOverrunning = "acemq.handler.overrunning"
)

// The circuit breaker's metrics (a consumer's WithCircuitBreaker), this
// library's own: its state (one-hot, by queue and consumer) and the
// transitions into each state.
const (
	MetricCircuitBreakerState       = "acemq.circuit.breaker.state"
	MetricCircuitBreakerTransitions = "acemq.circuit.breaker.transitions.total"
)

// MetricPrefix starts every metric's name: the namespace.
const MetricPrefix = "acemq."

// The family's tags, as they are named on its metrics; Prometheus shows
// them with underscores (routing_key).
const (
	TagExchange    = "exchange"
	TagRoutingKey  = "routing.key"
	TagQueue       = "queue"
	TagMessageType = "message.type"
	TagTarget      = "target"
	TagRung        = "rung"
	TagOutcome     = "outcome"
	TagPipeline    = "pipeline"
	TagStep        = "step"
)

// This library's own tags, beside the family's.
const (
	// TagReasonClass is a ReasonClass (none for an accepted message), or,
	// on a publish, the PublishOutcome its family outcome folds away.
	TagReasonClass = "reason.class"
	// TagKind is why the library republished a message: a RepublishKind.
	TagKind  = "kind"
	TagWhere = "where"
	TagState = "state"
	TagEvent = "event"
	// TagConsumer is a consumer's id (Consumer.ID): the queue's name
	// unless the service named it.
	TagConsumer = "consumer"
)

// Values of the tags of this library's own.
const (
	// TagRungConsumer is the rung of a retry waited for in the consumer:
	// no rung's name (they all hold RungInfix) can be it.
	TagRungConsumer = "consumer"
	// TagNone is reason.class of what needs no reason (accepted, confirmed).
	TagNone = "none"
)

// MetricKind is what a metric is.
type MetricKind string

const (
	Counter   MetricKind = "counter"
	Gauge     MetricKind = "gauge"
	Histogram MetricKind = "histogram"
)

// Metric is one metric this library exports.
type Metric struct {
	Name string // acemq.publish.total
	Kind MetricKind
	// Seconds: a duration, in seconds.
	Seconds bool
	// Tags are its labels, in the family's spelling.
	Tags []string
	// Family: one of section 17's; else this library's own.
	Family bool
	// Outcomes are the words its outcome tag takes, when it has one.
	Outcomes []TelemetryOutcome
}

// Prometheus is the metric's name as the family's Prometheus shows it,
// as the Prometheus exporters of OpenTelemetry and Micrometer render it:
// dots to underscores, a duration's name ending in _seconds, a counter's in
// _total (added when the name lacks it).
func (m Metric) Prometheus() string {
	return PrometheusName(m.Name, m.Kind, m.Seconds)
}

// PrometheusName renders a metric's name (Metric.Prometheus).
func PrometheusName(name string, kind MetricKind, seconds bool) string {
	n := PrometheusLabel(name)
	if seconds && !strings.HasSuffix(n, "_seconds") {
		n += "_seconds"
	}
	if kind == Counter && !strings.HasSuffix(n, "_total") {
		n += "_total"
	}
	return n
}

// PrometheusLabel renders a tag's name as Prometheus shows it: dots to
// underscores (routing.key is routing_key).
func PrometheusLabel(tag string) string { return strings.ReplaceAll(tag, ".", "_") }

var (
	publishOutcomes = []TelemetryOutcome{TelemetryConfirmed, TelemetryPublished, TelemetryUnroutable, TelemetryFailed}
	consumeOutcomes = []TelemetryOutcome{TelemetryAcked, TelemetryRetried, TelemetryRejected, TelemetryDeadLettered, TelemetryParked, TelemetryInProgress}
	requestOutcomes = []TelemetryOutcome{TelemetryAnswered, TelemetryTimedOut, TelemetryFailed}
	outboxOutcomes  = []TelemetryOutcome{TelemetryPublished, TelemetryFailed}
	runOutcomes     = []TelemetryOutcome{TelemetryCompleted, TelemetryEndedEarly}
)

var metrics = []Metric{
	{MetricPublishTotal, Counter, false, []string{TagExchange, TagRoutingKey, TagMessageType, TagOutcome, TagReasonClass}, true, publishOutcomes},
	{MetricPublishDuration, Histogram, true, []string{TagExchange}, true, nil},
	{MetricConsumeTotal, Counter, false, []string{TagQueue, TagMessageType, TagOutcome, TagReasonClass}, true, consumeOutcomes},
	{MetricConsumeDuration, Histogram, true, []string{TagQueue}, true, nil},
	{MetricConsumeAttempts, Histogram, false, []string{TagQueue}, true, nil},
	{MetricConsumeInFlight, Gauge, false, []string{TagQueue}, true, nil},
	{MetricMessagesRetried, Counter, false, []string{TagQueue, TagRung}, true, nil},
	{MetricMessagesDeadLettered, Counter, false, []string{TagQueue, TagTarget, TagReasonClass}, true, nil},
	{MetricSetAsideFailed, Counter, false, []string{TagQueue, TagTarget}, true, nil},
	{MetricRungMissing, Counter, false, []string{TagQueue, TagRung}, true, nil},
	{MetricRequestTotal, Counter, false, []string{TagExchange, TagRoutingKey, TagOutcome}, true, requestOutcomes},
	{MetricRequestDuration, Histogram, true, []string{TagExchange, TagRoutingKey, TagOutcome}, true, requestOutcomes},
	{MetricOutboxTotal, Counter, false, []string{TagOutcome}, true, outboxOutcomes},
	{MetricOutboxLag, Gauge, true, nil, true, nil},
	{MetricPipelineRunTotal, Counter, false, []string{TagPipeline, TagStep, TagOutcome}, true, runOutcomes},
	{MetricPipelineRunDuration, Histogram, true, []string{TagPipeline, TagStep, TagOutcome}, true, runOutcomes},
	{MetricRepublishTotal, Counter, false, []string{TagExchange, TagRoutingKey, TagMessageType, TagKind, TagOutcome, TagReasonClass}, false, publishOutcomes},
	{MetricRetryWaiting, Gauge, false, []string{TagQueue, TagWhere}, false, nil},
	{MetricSetAsideMessages, Gauge, false, []string{TagQueue, TagWhere}, false, nil},
	{MetricInspectErrors, Counter, false, []string{TagQueue, TagTarget}, false, nil},
	{MetricConsumerPaused, Gauge, false, []string{TagQueue, TagConsumer}, false, nil},
	{MetricConnectionState, Gauge, false, []string{TagState}, false, nil},
	{MetricConnectionEvents, Counter, false, []string{TagEvent}, false, nil},
	{MetricHandlerTimeouts, Counter, false, []string{TagQueue}, false, nil},
	{MetricHandlerOverrunning, Gauge, false, []string{TagQueue}, false, nil},
	{MetricCircuitBreakerState, Gauge, false, []string{TagQueue, TagConsumer, TagState}, false, nil},
	{MetricCircuitBreakerTransitions, Counter, false, []string{TagQueue, TagConsumer, TagState}, false, nil},
}

// Metrics are the metrics this library exports: the family's (section 17)
// and its own.
func Metrics() []Metric {
	out := slices.Clone(metrics)
	for i := range out {
		out[i].Tags = slices.Clone(out[i].Tags)
		out[i].Outcomes = slices.Clone(out[i].Outcomes)
	}
	return out
}

// TelemetryOutcome is an outcome as the family's metrics and spans say it
// (the outcome tag, messaging.acemq.outcome): fewer words than Outcome and
// PublishOutcome, which fold into them (PublishOutcome.Telemetry,
// Outcome.Telemetry), the reason class keeping the rest.
type TelemetryOutcome string

const (
	TelemetryConfirmed  TelemetryOutcome = "confirmed"  // publish: the broker confirmed it
	TelemetryPublished  TelemetryOutcome = "published"  // publish: sent without confirms, never this library's, which confirms every publish; outbox: a record confirmed and marked
	TelemetryUnroutable TelemetryOutcome = "unroutable" // publish: no queue took it
	TelemetryFailed     TelemetryOutcome = "failed"     // publish, request: anything else; outbox: a record's publish failed

	TelemetryAcked        TelemetryOutcome = "acked"         // consume: accepted
	TelemetryRetried      TelemetryOutcome = "retried"       // consume: in the consumer or on a rung
	TelemetryRejected     TelemetryOutcome = "rejected"      // consume: the handler rejected it (Reject, Fatal): set aside in Q.dlq
	TelemetryDeadLettered TelemetryOutcome = "dead_lettered" // consume: set aside in Q.dlq
	TelemetryParked       TelemetryOutcome = "parked"        // consume: set aside in Q.parked
	TelemetryInProgress   TelemetryOutcome = "in_progress"   // consume: back on its queue, not done (Requeue, or handed back)

	TelemetryAnswered TelemetryOutcome = "answered"  // request: a reply came and decoded
	TelemetryTimedOut TelemetryOutcome = "timed_out" // request: no reply before the deadline

	TelemetryCompleted  TelemetryOutcome = "completed"   // pipeline run: its last step was done
	TelemetryEndedEarly TelemetryOutcome = "ended_early" // pipeline run: a step ended it before the last
)

// RepublishKind is why the library publishes a message again, of its own
// accord (the kind tag of acemq.republish.total); "" is a publish of the
// application's, which acemq.publish.total counts.
type RepublishKind string

const (
	RepublishRetry            RepublishKind = "retry"             // to a rung, or back to its queue after a wait in the consumer
	RepublishSetAside         RepublishKind = "set_aside"         // to Q.dlq or Q.parked
	RepublishPutBack          RepublishKind = "put_back"          // a copy back on its queue: Requeue, a failed set-aside
	RepublishReplay           RepublishKind = "replay"            // a dead letter a person moves, replays or edits (package deadletter)
	RepublishScheduleHop      RepublishKind = "schedule_hop"      // the scheduler's forwarder, onto a rung of acemq.schedule
	RepublishScheduleDelivery RepublishKind = "schedule_delivery" // the scheduler's forwarder, to the target, once due
)

// Republish is why a settlement of this outcome republishes its message.
func (o Outcome) Republish() RepublishKind {
	switch o {
	case RetriedInConsumer, RetriedOnRung:
		return RepublishRetry
	case DeadLettered, Parked:
		return RepublishSetAside
	case PutBack:
		return RepublishPutBack
	}
	return ""
}

// Telemetry is the family's word for a publish's outcome: refused and
// timed out are failed (the reason.class tag keeps which).
func (o PublishOutcome) Telemetry() TelemetryOutcome {
	switch o {
	case PublishConfirmed:
		return TelemetryConfirmed
	case PublishUnroutable:
		return TelemetryUnroutable
	}
	return TelemetryFailed
}

// Telemetry is the family's word for how a delivery ended, for its reason
// class: both retries are retried; a set-aside in Q.dlq the handler asked
// for (Reject, or a Fatal error, which Java writes one reason for) is
// rejected, as the family counts a handler's rejection, any other is
// dead_lettered; a delivery back on its queue, not done and no attempt
// spent (PutBack: put back by Requeue, or copied back after a failed
// set-aside; Requeued: handed back at shutdown or after a failed ack or
// put-back), is in_progress, its reason class saying why.
func (o Outcome) Telemetry(class ReasonClass) TelemetryOutcome {
	switch o {
	case Accepted:
		return TelemetryAcked
	case RetriedInConsumer, RetriedOnRung:
		return TelemetryRetried
	case DeadLettered:
		if class == ReasonRejected || class == ReasonFatal {
			return TelemetryRejected
		}
		return TelemetryDeadLettered
	case Parked:
		return TelemetryParked
	}
	return TelemetryInProgress
}

// The spans (section 17): "<destination> publish" (producer), "<queue>
// process" (consumer), "<destination> request" (client).
const (
	SpanPublish = "publish"
	SpanProcess = "process"
	SpanRequest = "request"
)

// The spans' attributes of the family (section 17). Where Java and the Go
// peer disagree, these are the Go peer's, which are OpenTelemetry's
// semantic convention for the routing key and keep the message type in
// the library's namespace.
const (
	AttrMessagingSystem = "messaging.system"
	AttrDestinationName = "messaging.destination.name"
	AttrOperation       = "messaging.operation"
	AttrMessageID       = "messaging.message.id"
	AttrConversationID  = "messaging.message.conversation_id"
	AttrRoutingKey      = "messaging.rabbitmq.destination.routing_key"
	AttrOutcome         = "messaging.acemq.outcome"
	AttrAttempt         = "messaging.acemq.attempt"
	AttrMessageType     = "messaging.acemq.message_type"
)

// This library's own span attributes, which the family lacks, in the same
// namespace.
const (
	AttrRedelivered     = "messaging.acemq.redelivered"
	AttrRepublish       = "messaging.acemq.republish"
	AttrRepublishKind   = "messaging.acemq.republish.kind"
	AttrReasonClass     = "messaging.acemq.reason_class"
	AttrReason          = "messaging.acemq.reason"
	AttrTarget          = "messaging.acemq.target"
	AttrRetryAttempt    = "messaging.acemq.retry.attempt"
	AttrRetryDelay      = "messaging.acemq.retry.delay"
	AttrHandlerDuration = "messaging.acemq.handler.duration"
	// EventPipelineRun is the span event of a pipeline run's end, on the
	// delivery's span of the step it ended at, with the pipeline, step,
	// outcome and duration attributes below.
	EventPipelineRun     = "acemq.pipeline.run"
	AttrPipeline         = "messaging.acemq.pipeline"
	AttrPipelineStep     = "messaging.acemq.pipeline.step"
	AttrPipelineDuration = "messaging.acemq.pipeline.duration"
	// The spans of a consumer's run-time control ("Q pause", "Q resume",
	// "Q rescale"): its id, the cause that paused or let go of it, its
	// new scale.
	AttrConsumer    = "messaging.acemq.consumer"
	AttrPauseCause  = "messaging.acemq.pause.cause"
	AttrConcurrency = "messaging.acemq.concurrency"
	AttrPrefetch    = "messaging.acemq.prefetch"
)

// A consumer's circuit breaker's transition is a span of its own, "<queue>
// circuit_breaker", with the state entered and the reason
// (messaging.acemq.reason): this library's own.
const (
	SpanCircuitBreaker      = "circuit_breaker"
	AttrCircuitBreakerState = "messaging.acemq.circuit_breaker.state"
)

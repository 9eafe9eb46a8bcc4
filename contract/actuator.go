package contract

// The actuator endpoints (section 17): the HTTP paths a fleet scrapes and
// probes, where they listen, and the JSON they answer with.
const (
	// ActuatorMetricsPath serves the Prometheus text exposition.
	ActuatorMetricsPath = "/acemq-metrics"
	// ActuatorHealthPath serves the health as JSON: 503 when the
	// connection is down.
	ActuatorHealthPath = "/acemq-health"
	// ActuatorInfoPath serves the library, its version, the transport and
	// the capabilities as JSON.
	ActuatorInfoPath = "/acemq-info"
	// ActuatorConsumersPath lists the consumers of the Conn (GET);
	// ActuatorConsumersPath/{id} shows one (GET), and /{id}/pause,
	// /{id}/resume and /{id}/scale control it (POST): section 21's
	// consumers addressable at run time by an id. The family names no
	// path for them: this library chose these, beside its other paths.
	ActuatorConsumersPath = "/acemq-consumers"
	ActuatorPauseAction   = "pause"
	ActuatorResumeAction  = "resume"
	ActuatorScaleAction   = "scale"
	// DefaultActuatorAddress is where the actuator listens unless told
	// otherwise: loopback, on the family's port.
	DefaultActuatorAddress = "127.0.0.1:9464"
)

// The health JSON, in the lowercase shape of the Go peer, Ruby and Python:
// {"status":…,"detail":…,"checked":…,"parts":{"connection":{"status":…,"detail":…},…}}.
const (
	HealthFieldStatus  = "status"
	HealthFieldDetail  = "detail"
	HealthFieldChecked = "checked"
	HealthFieldParts   = "parts"

	// The parts: the connection, the broker's answer to a round trip, and
	// the consumers running on the connection.
	HealthPartConnection = "connection"
	HealthPartBroker     = "broker"
	HealthPartConsumers  = "consumers"

	// HealthPartPausedConsumers stands beside the parts, as blocked does
	// (parts.pausedConsumers): how many consumers are paused, by an
	// operator or a circuit breaker. This library's: the family names
	// none.
	HealthPartPausedConsumers = "pausedConsumers"
)

// HealthStatus is a health's status, and each part's.
type HealthStatus string

const (
	HealthUp       HealthStatus = "up"
	HealthDegraded HealthStatus = "degraded"
	HealthDown     HealthStatus = "down"
)

// The info JSON: {"library":…,"version":…,"transport":…,"capabilities":[…]}.
const (
	InfoFieldLibrary      = "library"
	InfoFieldVersion      = "version"
	InfoFieldTransport    = "transport"
	InfoFieldCapabilities = "capabilities"

	// Library names this library in the info: its module path, which no
	// other member of the family shares.
	Library = "github.com/acemq-go/acemq"
	// VersionDevel is the version of a build that recorded none (from a
	// checkout, or a replaced module).
	VersionDevel = "devel"

	TransportAMQP   = "amqp"
	TransportMemory = "memory"
	// TransportOther is a transport.Transport of the application's own.
	TransportOther = "other"
)

// Capability is something a build offers, listed by the info endpoint.
type Capability string

const (
	// Every build: publishes confirmed by the broker, the retry ladder of
	// the contract's rungs and of at-least-once rungs, Q.dlq and Q.parked.
	CapabilityPublisherConfirms  Capability = "publisher-confirms"
	CapabilityRetryLadder        Capability = "retry-ladder"
	CapabilityAtLeastOnceRungs   Capability = "at-least-once-rungs"
	CapabilityDeadLetterQueues   Capability = "dead-letter-queues"
	CapabilityRequestReply       Capability = "request-reply"       // package request is linked
	CapabilityClaimCheck         Capability = "claim-check"         // package claimcheck is linked
	CapabilityEncryption         Capability = "encryption"          // package encryption is linked
	CapabilityIdempotentConsumer Capability = "idempotent-consumer" // package idempotency is linked
)

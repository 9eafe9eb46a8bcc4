package acemq

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/lenient"
	"github.com/acemq-go/acemq/transport"
)

// UnknownAge is what Age returns for a message whose first-seen time is not
// known. The retry policy treats such a message as young enough.
const UnknownAge = time.Duration(-1)

var (
	// ErrReservedHeader is returned when application headers hold a header
	// starting with ReservedHeaderPrefix, or an interceptor set, changed or
	// removed one.
	ErrReservedHeader = errors.New("header name is reserved for acemq")
	// ErrInvalidEnvelope is returned when an envelope is written without a
	// value the contract requires; Complete fills them in.
	ErrInvalidEnvelope = errors.New("invalid envelope")
)

// Envelope is what AceMQ knows about a message beyond its body: the x-acemq-*
// headers and the AMQP properties it keeps on every hop.
type Envelope struct {
	// ID identifies the message across retries, dead-lettering and replays.
	// It reads as "" when the message carries none (no x-acemq-id, no AMQP
	// message-id): an id made up on reading would differ on every delivery
	// and every read, so "" must not be taken for a key.
	ID string
	// Type names the message's schema; it defaults to the routing key, or
	// "message" when that is empty or not known (ReadEnvelope).
	Type string
	// Version is the schema version, at least 1.
	Version int
	// Correlation groups the messages of one conversation; it defaults to ID.
	Correlation string
	// Causation is the ID of the message that caused this one, if any.
	Causation string
	// Attempt counts deliveries to a handler, from 1. RabbitMQ no longer
	// counts client republishes for us, so the library does.
	Attempt int
	// FirstSeen is when the message was first published, in milliseconds;
	// the zero time means unknown.
	FirstSeen time.Time
	// Origin is the publishing "service@host".
	Origin string
	// Error says why the message was dead-lettered or parked.
	Error string
	// Claim is the application's own reference (e.g. a URI), carried as is.
	Claim string
	// ContentType is the AMQP content-type property; it selects the Codec.
	ContentType string
	// ReplyTo is the AMQP reply-to property.
	ReplyTo string
	// CorrelationID is the AMQP correlation-id property, which request-reply
	// matches a reply to its request by (package request); Correlation is
	// the x-acemq-correlation header, a conversation's id.
	CorrelationID string
	// Headers are the application headers only: never an x-acemq-* one.
	Headers Table
	// Route is the routing slip in its step form, as the Java library
	// writes it. Write leaves it out (a republish keeps the headers as they
	// came); package slip reads it and writes it on.
	Route Route
}

// Route is a routing slip in the step form (CONTRACT.md section 13): the
// zero Route means the message has none.
type Route struct {
	// Steps are the names of every step, done and remaining, in order.
	Steps []string
	// Position is the 0-based index of the current step in Steps: 0 when
	// the message names none, -1 when the one it names is unreadable or
	// negative (a slip that does not parse: package slip refuses it).
	Position int
	// ID identifies the run of the pipeline.
	ID string
}

// Current is the name of the current step, if Position is within Steps.
func (r Route) Current() (string, bool) {
	if r.Position < 0 || r.Position >= len(r.Steps) {
		return "", false
	}
	return r.Steps[r.Position], true
}

// ReadEnvelope reads the envelope of m. Reading is lenient, so that a message
// from any AceMQ library (or none) can be handled: a missing, empty or
// unreadable value falls back to its default, integers may arrive in any
// width, as integral floats or as numeric strings, and strings as []byte.
// Headers always holds a table, without any x-acemq-* header. A message
// alone has no routing key, so a missing type reads as "message";
// readDelivery uses the delivery's routing key first.
func ReadEnvelope(m RawMessage) Envelope { return readEnvelope(m, "") }

// readDelivery reads the envelope of d as ReadEnvelope does, except that a
// missing type reads as d's routing key (then "message"), as a first
// publish would have set it. That is what a consumer's handler sees.
func readDelivery(d transport.Delivery) Envelope { return readEnvelope(d.Message, d.RoutingKey) }

func readEnvelope(m transport.Message, routingKey string) Envelope {
	h := m.Headers
	e := Envelope{
		ID:            readID(m),
		Type:          readType(h, routingKey),
		Version:       lenient.Count(h[contract.HeaderVersion]),
		Correlation:   lenient.String(h[contract.HeaderCorrelation]),
		Causation:     lenient.String(h[contract.HeaderCausation]),
		Attempt:       lenient.Count(h[contract.HeaderAttempt]),
		FirstSeen:     lenient.Millis(h[contract.HeaderFirstSeen]),
		Origin:        lenient.String(h[contract.HeaderOrigin]),
		Error:         lenient.String(h[contract.HeaderError]),
		Claim:         lenient.String(h[contract.HeaderClaim]),
		ContentType:   lenient.Valid(m.ContentType),
		ReplyTo:       lenient.Valid(m.ReplyTo),
		CorrelationID: lenient.Valid(m.CorrelationID),
		Headers:       make(transport.Table, len(h)),
		Route:         readRoute(h),
	}
	if e.Correlation == "" {
		e.Correlation = e.ID
	}
	for k, v := range h {
		if !isReserved(k) {
			e.Headers[k] = v
		}
	}
	return e
}

// readID reads the id: the x-acemq-id header, else the AMQP message-id, else
// none (""). A blank id is no id.
func readID(m transport.Message) string {
	if id := lenient.String(m.Headers[contract.HeaderID]); !isBlank(id) {
		return id
	}
	if id := lenient.Valid(m.MessageID); !isBlank(id) {
		return id
	}
	return ""
}

// readType reads the type: the x-acemq-type header, else routingKey, else
// contract.DefaultType, as Complete would have set it.
func readType(h transport.Table, routingKey string) string {
	if t := lenient.String(h[contract.HeaderType]); t != "" {
		return t
	}
	if routingKey = lenient.Valid(routingKey); routingKey != "" {
		return routingKey
	}
	return contract.DefaultType
}

// readRoute reads the step-form routing slip: steps comma-joined (spaces
// around a name trimmed, empty names kept so that positions still match),
// a position that reads as 0 when missing, and as -1 (no step) when
// present but unreadable or negative: a slip that does not parse must not
// start its run again from the first step.
func readRoute(h transport.Table) Route {
	r := Route{ID: lenient.String(h[contract.HeaderRouteID])}
	if steps := lenient.String(h[contract.HeaderRoute]); !isBlank(steps) {
		r.Steps = contract.SplitRoute(steps)
	}
	if v := h[contract.HeaderRoutePosition]; v != nil && !isEmptyString(v) {
		if n, ok := lenient.Int(v); ok && n >= 0 {
			r.Position = n
		} else {
			r.Position = -1
		}
	}
	return r
}

// Age is how long ago the message was first seen, or UnknownAge when that is
// not known. A first-seen time in the future (clock skew) gives 0.
func (e Envelope) Age(now time.Time) time.Duration {
	if e.FirstSeen.IsZero() {
		return UnknownAge
	}
	return max(now.Sub(e.FirstSeen), 0)
}

// Complete returns e with every missing value filled in as a first publish
// sets it: a new UUID v4 id, routingKey (or "message") as type, version 1,
// the id as correlation, attempt 1, now as first-seen and defaultOrigin.
// Values already set are kept; first-seen is cut to the millisecond the
// header carries.
func (e Envelope) Complete(routingKey string, now time.Time) Envelope {
	if isBlank(e.ID) {
		e.ID = uuid.NewString()
	}
	if e.Type == "" {
		e.Type = routingKey
	}
	if e.Type == "" {
		e.Type = contract.DefaultType
	}
	e.Version = max(e.Version, 1)
	if e.Correlation == "" {
		e.Correlation = e.ID
	}
	e.Attempt = max(e.Attempt, 1)
	if lenient.CutToMillis(e.FirstSeen).IsZero() {
		e.FirstSeen = now
	}
	e.FirstSeen = lenient.CutToMillis(e.FirstSeen)
	if e.Origin == "" {
		e.Origin = defaultOrigin()
	}
	return e
}

// Write sets m's headers to the application headers plus the x-acemq-* ones,
// and its message-id, content type, reply-to, correlation-id and persistence; Route is left
// out (package slip writes a slip's headers). Values are written
// only as string and int64; an empty value is left out, never sent as null
// or "". Write refuses application headers in the reserved namespace
// (ErrReservedHeader), and an envelope without an id, attempt or version or
// with a string that is not UTF-8 (ErrInvalidEnvelope), rather than send
// what no reader could trust. A refused Write leaves m as it was.
func (e Envelope) Write(m *RawMessage) error {
	if m == nil {
		return errors.New("acemq: writing an envelope to a nil message")
	}
	if err := e.check(); err != nil {
		return err
	}
	firstSeen := lenient.CutToMillis(e.FirstSeen)
	strs := [...]struct{ key, value string }{
		{contract.HeaderType, e.Type}, {contract.HeaderCorrelation, e.Correlation}, {contract.HeaderCausation, e.Causation},
		{contract.HeaderOrigin, e.Origin}, {contract.HeaderError, e.Error}, {contract.HeaderClaim, e.Claim},
	}
	// Sized exactly: up to 8 entries a map is one small allocation, beyond
	// it several.
	size := len(e.Headers) + 3
	for _, s := range strs {
		if s.value != "" {
			size++
		}
	}
	if !firstSeen.IsZero() {
		size++
	}
	h := make(transport.Table, size)
	for k, v := range e.Headers {
		h[k] = v
	}
	id := any(e.ID) // boxed once: the correlation id is most often the same
	h[contract.HeaderID] = id
	h[contract.HeaderVersion] = int64(e.Version)
	h[contract.HeaderAttempt] = int64(e.Attempt)
	for _, s := range strs {
		switch {
		case s.value == "":
		case s.value == e.ID:
			h[s.key] = id
		default:
			h[s.key] = s.value
		}
	}
	if !firstSeen.IsZero() {
		h[contract.HeaderFirstSeen] = firstSeen.UnixMilli()
	}
	m.Headers = h
	m.MessageID = e.ID
	m.ContentType = e.ContentType
	m.ReplyTo = e.ReplyTo
	m.CorrelationID = e.CorrelationID
	m.Persistent = true
	return nil
}

// check finds what would make Write send junk.
func (e Envelope) check() error {
	var reserved []string
	for k := range e.Headers {
		if isReserved(k) {
			reserved = append(reserved, k)
		}
	}
	if len(reserved) > 0 {
		slices.Sort(reserved)
		return fmt.Errorf("acemq: application header %q: %w (prefix %q)", reserved[0], ErrReservedHeader, contract.ReservedHeaderPrefix)
	}
	switch {
	case isBlank(e.ID):
		return fmt.Errorf("acemq: %w: ID is blank", ErrInvalidEnvelope)
	case e.Version < 1:
		return fmt.Errorf("acemq: %w: Version is %d, want at least 1", ErrInvalidEnvelope, e.Version)
	case e.Attempt < 1:
		return fmt.Errorf("acemq: %w: Attempt is %d, want at least 1", ErrInvalidEnvelope, e.Attempt)
	}
	for _, f := range []struct{ name, value string }{
		{"ID", e.ID}, {"Type", e.Type}, {"Correlation", e.Correlation},
		{"Causation", e.Causation}, {"Origin", e.Origin}, {"Error", e.Error},
		{"Claim", e.Claim}, {"ContentType", e.ContentType}, {"ReplyTo", e.ReplyTo},
		{"CorrelationID", e.CorrelationID},
	} {
		if !utf8.ValidString(f.value) {
			return fmt.Errorf("acemq: %w: %s is not valid UTF-8", ErrInvalidEnvelope, f.name)
		}
	}
	return nil
}

// defaultOrigin is "acemq@<hostname>", or "acemq@unknown" when the host name
// cannot be read. The host name is looked up once.
var defaultOrigin = sync.OnceValue(func() string { return contract.DefaultOriginService + "@" + hostname() })

// isReserved reports whether a header name starts with ReservedHeaderPrefix,
// in any case.
func isReserved(name string) bool {
	n := len(contract.ReservedHeaderPrefix)
	return len(name) >= n && strings.EqualFold(name[:n], contract.ReservedHeaderPrefix)
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }

// isEmptyString reports whether a header value is an empty string, which
// reads as absent.
func isEmptyString(v any) bool {
	switch v := v.(type) {
	case string:
		return v == ""
	case []byte:
		return len(v) == 0
	}
	return false
}

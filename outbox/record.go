package outbox

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/lenient"
)

// Message is what a service writes to the outbox in its transaction: an
// AceMQ message, published by a relay once the transaction has committed.
type Message struct {
	// Exchange is where the relay publishes it ("" is the default
	// exchange, which routes by queue name).
	Exchange string
	// RoutingKey is what it is published under.
	RoutingKey string
	// Body is encoded by Codec when the record is written.
	Body any
	// Codec encodes Body; nil picks a Publisher's default: acemq.Bytes for
	// a []byte, acemq.Text for a string, acemq.JSON for anything else.
	Codec acemq.Codec
	// Options set the envelope, as a Publisher's MessageOptions do.
	Options []acemq.MessageOption
}

// Row is a record's stored columns as a store writes and reads them, the
// times and the bookkeeping left to the store: Ruby's columns (CONTRACT.md
// section 16), so that a relay of another AceMQ library publishes it too.
type Row struct {
	Exchange   string // exchange_name
	RoutingKey string // routing_key
	Body       string // body, as BodyEncoding says
	// BodyEncoding is contract.OutboxBodyText (the body as it is) or
	// contract.OutboxBodyBase64.
	BodyEncoding string
	ContentType  string // content_type
	// Headers is a JSON object: every header of the message, the envelope's
	// x-acemq-* ones included.
	Headers string
}

// Record is an outbox row as a relay claimed it, read back into the
// message to publish.
type Record struct {
	ID         int64
	Exchange   string
	RoutingKey string
	// Message is the message as it is published: body, content type,
	// headers, the AMQP message-id (the x-acemq-id header) and persistent.
	Message   acemq.RawMessage
	CreatedAt time.Time
	// Attempts counts the failed publishes so far.
	Attempts int
	// Err says why the stored row could not be read back (set by the store
	// instead of Message): the relay counts it as a failed publish, so that
	// a bad row is given up after its attempts rather than retried forever.
	Err error
}

// ErrBadRecord is matched (errors.Is) by the error of a stored row that
// cannot be read back into a message.
var ErrBadRecord = errors.New("outbox: the stored record cannot be read")

// Encode makes the row of m: the body encoded by its codec and wrapped in
// the envelope a Publisher writes (a new id, the type, version, correlation,
// attempt 1, now as first-seen, the origin, the content type), so that a
// consumer of any AceMQ library reads what the relay publishes.
func Encode(m Message, now time.Time) (Row, error) {
	codec := m.Codec
	if codec == nil {
		codec = acemq.DefaultCodec(m.Body)
	}
	env := acemq.Envelope{ContentType: codec.ContentType()}
	for _, opt := range m.Options {
		opt(&env)
	}
	env = env.Complete(m.RoutingKey, now)
	body, err := codec.Marshal(m.Body)
	if err != nil {
		return Row{}, fmt.Errorf("outbox: message %s: %w", env.ID, err)
	}
	msg := acemq.RawMessage{Body: body}
	if err := env.Write(&msg); err != nil {
		return Row{}, fmt.Errorf("outbox: message %s: %w", env.ID, err)
	}
	headers, err := EncodeHeaders(msg.Headers)
	if err != nil {
		return Row{}, fmt.Errorf("outbox: message %s: %w", env.ID, err)
	}
	text, encoding := EncodeBody(body)
	return Row{Exchange: m.Exchange, RoutingKey: m.RoutingKey, Body: text, BodyEncoding: encoding,
		ContentType: msg.ContentType, Headers: headers}, nil
}

// Message reads the row back into the message a relay publishes. Its
// errors match ErrBadRecord.
func (r Row) Message() (acemq.RawMessage, error) {
	body, err := DecodeBody(r.Body, r.BodyEncoding)
	if err != nil {
		return acemq.RawMessage{}, err
	}
	headers, err := DecodeHeaders(r.Headers)
	if err != nil {
		return acemq.RawMessage{}, err
	}
	return acemq.RawMessage{Headers: headers, ContentType: r.ContentType, Body: body,
		MessageID: lenient.String(headers[contract.HeaderID]), Persistent: true}, nil
}

// EncodeBody keeps body as text (contract.OutboxBodyText) when it is UTF-8
// without a NUL byte, and in base64 (contract.OutboxBodyBase64) otherwise,
// so that any body survives a TEXT column.
func EncodeBody(body []byte) (text, encoding string) {
	if utf8.Valid(body) && bytes.IndexByte(body, 0) < 0 {
		return string(body), contract.OutboxBodyText
	}
	return base64.StdEncoding.EncodeToString(body), contract.OutboxBodyBase64
}

// DecodeBody reads a stored body back; the encoding is compared ignoring
// case. Its errors match ErrBadRecord.
func DecodeBody(text, encoding string) ([]byte, error) {
	switch {
	case strings.EqualFold(encoding, contract.OutboxBodyText):
		return []byte(text), nil
	case strings.EqualFold(encoding, contract.OutboxBodyBase64):
		b, err := base64.StdEncoding.DecodeString(text)
		if err != nil {
			return nil, fmt.Errorf("%w: the body is not base64: %w", ErrBadRecord, err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("%w: body_encoding %q is neither %q nor %q", ErrBadRecord, clip(encoding), contract.OutboxBodyText, contract.OutboxBodyBase64)
}

// EncodeHeaders writes a header table as a JSON object: strings, integers,
// floats, booleans, nested tables and arrays as JSON has them; []byte as a
// string when it is UTF-8; a time as RFC 3339 UTC text with milliseconds.
// The envelope's own headers are strings and integers, which read back as
// they were.
func EncodeHeaders(h acemq.Table) (string, error) {
	v, err := jsonValue(map[string]any(h), 0)
	if err != nil {
		return "", fmt.Errorf("outbox: headers: %w", err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("outbox: headers: %w", err)
	}
	return string(b), nil
}

// maxDepth bounds the nesting of tables and arrays in headers (AMQP has no
// such limit, but a header nested deeper than this is a mistake).
const maxDepth = 32

func jsonValue(v any, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested more than %d deep", maxDepth)
	}
	switch x := v.(type) {
	case nil, string, bool, int, int8, int16, int32, int64, uint8, uint16, uint32, uint64:
		return x, nil
	case float32:
		return jsonValue(float64(x), depth)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("the float %v has no JSON form", x)
		}
		return x, nil
	case []byte:
		if !utf8.Valid(x) {
			return nil, errors.New("a []byte value is not UTF-8")
		}
		return string(x), nil
	case time.Time:
		return x.UTC().Format(contract.ReplayedAtLayout), nil
	case acemq.Table:
		return jsonValue(map[string]any(x), depth)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			j, err := jsonValue(e, depth+1)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", k, err)
			}
			out[k] = j
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			j, err := jsonValue(e, depth+1)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = j
		}
		return out, nil
	}
	return nil, fmt.Errorf("a value of type %T has no JSON form", v)
}

// DecodeHeaders reads a headers column back: a JSON object (empty text and
// null are no headers), whose integers read as int64, other numbers as
// float64, objects as acemq.Table and arrays as []any; a null value is
// left out, as the envelope never sends one. Its errors match ErrBadRecord.
func DecodeHeaders(text string) (acemq.Table, error) {
	h := acemq.Table{}
	if strings.TrimSpace(text) == "" {
		return h, nil
	}
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	var raw any
	if err := d.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%w: the headers are not JSON: %w", ErrBadRecord, err)
	}
	if d.More() {
		return nil, fmt.Errorf("%w: the headers hold more than one JSON value", ErrBadRecord)
	}
	if raw == nil {
		return h, nil
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: the headers are a JSON %s, not an object", ErrBadRecord, jsonKind(raw))
	}
	v, err := tableValue(obj, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: headers: %w", ErrBadRecord, err)
	}
	return v.(acemq.Table), nil
}

func tableValue(v any, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested more than %d deep", maxDepth)
	}
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, nil
		}
		f, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("the number %s is out of range", clip(string(x)))
		}
		return f, nil
	case map[string]any:
		t := make(acemq.Table, len(x))
		for k, e := range x {
			if e == nil {
				continue
			}
			j, err := tableValue(e, depth+1)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", clip(k), err)
			}
			t[k] = j
		}
		return t, nil
	case []any:
		out := make([]any, 0, len(x))
		for i, e := range x {
			if e == nil {
				return nil, fmt.Errorf("[%d]: null in an array, which AMQP cannot carry", i)
			}
			j, err := tableValue(e, depth+1)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out = append(out, j)
		}
		return out, nil
	}
	return v, nil // string, bool
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// clip shortens a stored value quoted in an error.
func clip(s string) string {
	const n = 64
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

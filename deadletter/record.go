package deadletter

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/acemq-go/acemq"
	amqp "github.com/rabbitmq/amqp091-go"
)

// exportFormat tags every line of an export, so that a file of another
// format, or of a later version of this one, is refused rather than misread.
const exportFormat = "acemq-export/1"

// Exported is one message of an export file and the queue it came from.
//
// An export file is JSON Lines: one object per line, its fields in this
// order (wrapped here, one line in the file):
//
//	{"format":"acemq-export/1","queue":"orders.new.dlq",
//	 "properties":{"contentType":"application/json","messageId":"m-1","timestamp":"2023-11-14T22:13:20Z","persistent":true},
//	 "headers":{"x-attempts":{"type":"signedint","value":3},"x-reason":{"type":"longstr","value":"rejected"}},
//	 "body":"eyJpZCI6MX0="}
//
// format is "acemq-export/1" on every line; a line of another format is
// refused. properties holds contentType, contentEncoding, messageId,
// correlationId, replyTo, type, timestamp, persistent, expiration, priority,
// appId and userId; an empty string, a zero timestamp and priority 0 are left
// out, persistent is always there. headers is left out when the message has
// none (nil) and is {} when it has an empty table. body is the body in
// standard base64.
//
// Each header value is {"type":T,"value":V}, T the name RabbitMQ gives its
// AMQP type, so that it is published back with that very type:
//
//	longstr        string           a string ({"type":"longstr","base64":...} when not UTF-8)
//	long           int64            a number
//	signedint      int32            a number
//	short          int16            a number
//	byte           int8             a number
//	unsignedbyte   uint8            a number
//	unsignedshort  uint16           a number
//	unsignedint    uint32           a number
//	float          float32          a string of strconv.FormatFloat: "1.5", "NaN", "+Inf", "-0"
//	double         float64          likewise
//	bool           bool             true or false
//	binary         []byte           a string, standard base64
//	timestamp      time.Time        a string, RFC 3339 in UTC and whole seconds
//	decimal        amqp.Decimal     {"scale":2,"value":12345}
//	table          acemq.Table  an object of such values
//	array          []any            a list of such values
//	void           nil              no value
//
// What comes back is what a transport would deliver after publishing the
// message: timestamps (the property and headers) in UTC, cut to the second;
// a nil body, binary, array or nested table empty (not nil); a
// map[string]any or an amqp.Table a acemq.Table; and every NaN Go's NaN,
// whatever its payload bits. Top-level headers keep nil apart from empty.
type Exported struct {
	Queue   string // the queue it was exported from
	Message acemq.RawMessage
}

// exportRecord is a line of an export file as encoding/json sees it.
type exportRecord struct {
	Format     string                      `json:"format"`
	Queue      string                      `json:"queue"`
	Properties exportProperties            `json:"properties"`
	Headers    *map[string]json.RawMessage `json:"headers,omitempty"` // a pointer: nil, not empty, is left out
	Body       exportedBody                `json:"body"`
}

type exportProperties struct {
	ContentType     string          `json:"contentType,omitempty"`
	ContentEncoding string          `json:"contentEncoding,omitempty"`
	MessageID       string          `json:"messageId,omitempty"`
	CorrelationID   string          `json:"correlationId,omitempty"`
	ReplyTo         string          `json:"replyTo,omitempty"`
	Type            string          `json:"type,omitempty"`
	Timestamp       string          `json:"timestamp,omitempty"`
	Persistent      bool            `json:"persistent"`
	Expiration      string          `json:"expiration,omitempty"`
	Priority        json.RawMessage `json:"priority,omitempty"`
	AppID           string          `json:"appId,omitempty"`
	UserID          string          `json:"userId,omitempty"`
}

// exportedValue is a header value with its AMQP type. Value stays raw JSON
// until the type says how to read it. Tables and arrays hold their values as
// raw JSON too, each decoded on its own so that an error can name it.
type exportedValue struct {
	Type   string          `json:"type"`
	Value  json.RawMessage `json:"value,omitempty"`
	Base64 json.RawMessage `json:"base64,omitempty"` // a longstr that is not UTF-8
}

type exportedDecimal struct {
	Scale json.RawMessage `json:"scale"`
	Value json.RawMessage `json:"value"`
}

// exportedBody decodes its base64 straight from the decoder's buffer: a body
// may be 128 MiB.
type exportedBody []byte

func (b *exportedBody) UnmarshalJSON(raw []byte) error {
	v, err := unquoteBase64(raw)
	if err != nil {
		return fmt.Errorf("body: %w", err)
	}
	*b = v
	return nil
}

// Encoder writes messages as JSON lines, one object per line.
type Encoder struct{ enc *json.Encoder }

func NewEncoder(w io.Writer) *Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // keep <, > and & as they are, for grep
	return &Encoder{enc}
}

// Encode writes x as one line, or nothing and an error when x holds what the
// format cannot carry exactly.
func (e *Encoder) Encode(x Exported) error {
	r, err := newExportRecord(x)
	if err != nil {
		return err
	}
	return e.enc.Encode(r)
}

func newExportRecord(x Exported) (*exportRecord, error) {
	m := x.Message
	// encoding/json would write U+FFFD for bytes that are not UTF-8.
	for _, f := range []struct{ name, value string }{
		{"queue", x.Queue},
		{"contentType", m.ContentType},
		{"contentEncoding", m.ContentEncoding},
		{"messageId", m.MessageID},
		{"correlationId", m.CorrelationID},
		{"replyTo", m.ReplyTo},
		{"type", m.Type},
		{"expiration", m.Expiration},
		{"appId", m.AppID},
		{"userId", m.UserID},
	} {
		if !utf8.ValidString(f.value) {
			return nil, fmt.Errorf("%s %q is not UTF-8, which an export cannot carry", f.name, f.value)
		}
	}
	r := &exportRecord{
		Format: exportFormat,
		Queue:  x.Queue,
		Properties: exportProperties{
			ContentType:     m.ContentType,
			ContentEncoding: m.ContentEncoding,
			MessageID:       m.MessageID,
			CorrelationID:   m.CorrelationID,
			ReplyTo:         m.ReplyTo,
			Type:            m.Type,
			Persistent:      m.Persistent,
			Expiration:      m.Expiration,
			AppID:           m.AppID,
			UserID:          m.UserID,
		},
		Body: nonNil(m.Body),
	}
	if !m.Timestamp.IsZero() {
		s, err := formatTimestamp(m.Timestamp)
		if err != nil {
			return nil, fmt.Errorf("timestamp: %w", err)
		}
		r.Properties.Timestamp = s
	}
	if m.Priority != 0 {
		r.Properties.Priority = json.RawMessage(strconv.Itoa(int(m.Priority)))
	}
	if m.Headers != nil {
		h, err := encodeTable("", m.Headers)
		if err != nil {
			return nil, err
		}
		r.Headers = &h
	}
	return r, nil
}

// nonNil keeps an empty body or binary a JSON string: encoding/json writes
// a nil []byte as null.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func encodeTable(path string, t map[string]any) (map[string]json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(t))
	for k, v := range t {
		p := keyPath(path, k)
		if !utf8.ValidString(k) {
			return nil, fmt.Errorf("header %s: the name is not UTF-8, which an export cannot carry", p)
		}
		raw, err := encodeValue(p, v)
		if err != nil {
			return nil, err
		}
		out[k] = raw
	}
	return out, nil
}

// keyPath names a header, or a field of a table in one: "x-death"[0]["queue"].
func keyPath(path, key string) string {
	if path == "" {
		return strconv.Quote(key)
	}
	return path + "[" + strconv.Quote(key) + "]"
}

func encodeValue(path string, v any) (json.RawMessage, error) {
	ev, err := typedValue(path, v)
	if err != nil {
		return nil, err
	}
	return marshalJSON(ev)
}

func typedValue(path string, v any) (exportedValue, error) {
	switch v := v.(type) {
	case nil:
		return exportedValue{Type: "void"}, nil
	case string:
		if !utf8.ValidString(v) {
			raw, err := marshalJSON([]byte(v))
			return exportedValue{Type: "longstr", Base64: raw}, err
		}
		return typedJSON("longstr", v)
	case int64:
		return typedJSON("long", v)
	case int32:
		return typedJSON("signedint", v)
	case int16:
		return typedJSON("short", v)
	case int8:
		return typedJSON("byte", v)
	case uint8:
		return typedJSON("unsignedbyte", v)
	case uint16:
		return typedJSON("unsignedshort", v)
	case uint32:
		return typedJSON("unsignedint", v)
	case float32:
		return typedJSON("float", strconv.FormatFloat(float64(v), 'g', -1, 32))
	case float64:
		return typedJSON("double", strconv.FormatFloat(v, 'g', -1, 64))
	case bool:
		return typedJSON("bool", v)
	case []byte:
		return typedJSON("binary", nonNil(v))
	case time.Time:
		s, err := formatTimestamp(v)
		if err != nil {
			return exportedValue{}, fmt.Errorf("header %s: %w", path, err)
		}
		return typedJSON("timestamp", s)
	case amqp.Decimal:
		return typedJSON("decimal", exportedDecimal{
			Scale: json.RawMessage(strconv.Itoa(int(v.Scale))),
			Value: json.RawMessage(strconv.Itoa(int(v.Value))),
		})
	case acemq.Table:
		return encodeNested(path, v)
	case map[string]any:
		return encodeNested(path, v)
	case amqp.Table:
		return encodeNested(path, v)
	case []any:
		l := make([]json.RawMessage, len(v)) // not nil, which would be written null
		for i, e := range v {
			raw, err := encodeValue(fmt.Sprintf("%s[%d]", path, i), e)
			if err != nil {
				return exportedValue{}, err
			}
			l[i] = raw
		}
		return typedJSON("array", l)
	}
	return exportedValue{}, fmt.Errorf("header %s: Go type %T has no AMQP type an export can carry", path, v)
}

func encodeNested(path string, t map[string]any) (exportedValue, error) {
	m, err := encodeTable(path, t)
	if err != nil {
		return exportedValue{}, err
	}
	return typedJSON("table", m)
}

func typedJSON(typ string, v any) (exportedValue, error) {
	raw, err := marshalJSON(v)
	return exportedValue{Type: typ, Value: raw}, err
}

// marshalJSON is json.Marshal without escaping HTML, as the Encoder writes.
func marshalJSON(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), err
}

// formatTimestamp writes a time as AMQP carries it: UTC, whole seconds.
func formatTimestamp(t time.Time) (string, error) {
	t = time.Unix(t.Unix(), 0).UTC()
	if y := t.Year(); y < 0 || y > 9999 {
		return "", fmt.Errorf("%v is outside the years 0000 to 9999 of RFC 3339", t)
	}
	return t.Format(time.RFC3339), nil
}

// parseTimestamp reads what formatTimestamp writes, and only that, so that
// a time read has one way to be written back.
func parseTimestamp(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil || t.UTC().Format(time.RFC3339) != s {
		return time.Time{}, fmt.Errorf("%q is not RFC 3339 in UTC and whole seconds, like 2006-01-02T15:04:05Z", s)
	}
	return t.UTC(), nil
}

// Decoder reads what Encoder wrote.
type Decoder struct {
	dec    *json.Decoder
	record int   // records read, to name the one an error is in
	err    error // the input is not JSON: every later Decode returns this
}

func NewDecoder(r io.Reader) *Decoder {
	// json.Decoder buffers as much as a record needs, so there is no limit
	// on the length of a line.
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields() // a misspelt field would be lost silently
	return &Decoder{dec: dec}
}

// Decode returns the next message, io.EOF after the last. Errors say which
// record (1-based line/record number) and what is wrong; in a file the
// Encoder wrote, record n is line n. Blank lines are skipped.
//
// After a record that is JSON but not a valid record, Decode goes on to the
// next one; after input that is not JSON, it returns the same error again.
func (d *Decoder) Decode() (Exported, error) {
	if d.err != nil {
		return Exported{}, d.err
	}
	var r exportRecord
	start := d.dec.InputOffset()
	err := d.dec.Decode(&r)
	if err == io.EOF {
		return Exported{}, io.EOF
	}
	d.record++
	if err != nil && d.dec.InputOffset() == start {
		// The decoder could not get past the value: there is no telling
		// where the next record starts.
		d.err = fmt.Errorf("record %d: %w", d.record, err)
		return Exported{}, d.err
	}
	x, err := r.exported(err)
	if err != nil {
		return Exported{}, fmt.Errorf("record %d: %w", d.record, err)
	}
	return x, nil
}

// exported checks a decoded record and makes it a message. decodeErr is
// encoding/json's complaint, if any: a wrong format explains it better.
func (r *exportRecord) exported(decodeErr error) (Exported, error) {
	switch {
	case r.Format == exportFormat:
	case r.Format == "" && decodeErr != nil:
		// Likely not an object at all: encoding/json says what it is.
	case r.Format == "":
		return Exported{}, fmt.Errorf(`no "format": not an %s record`, exportFormat)
	default:
		return Exported{}, fmt.Errorf("format %q, want %q", r.Format, exportFormat)
	}
	if decodeErr != nil {
		return Exported{}, jsonError(decodeErr)
	}
	if r.Body == nil {
		return Exported{}, errors.New(`no "body"`)
	}
	p := r.Properties
	m := acemq.RawMessage{
		ContentType:     p.ContentType,
		ContentEncoding: p.ContentEncoding,
		MessageID:       p.MessageID,
		CorrelationID:   p.CorrelationID,
		ReplyTo:         p.ReplyTo,
		Type:            p.Type,
		Persistent:      p.Persistent,
		Expiration:      p.Expiration,
		AppID:           p.AppID,
		UserID:          p.UserID,
		Body:            r.Body,
	}
	var err error
	if p.Timestamp != "" {
		if m.Timestamp, err = parseTimestamp(p.Timestamp); err != nil {
			return Exported{}, fmt.Errorf("properties.timestamp: %w", err)
		}
	}
	if p.Priority != nil {
		n, err := parseInt(p.Priority, 0, math.MaxUint8)
		if err != nil {
			return Exported{}, fmt.Errorf("properties.priority: %w", err)
		}
		m.Priority = uint8(n)
	}
	if r.Headers != nil {
		if m.Headers, err = decodeTable("", *r.Headers); err != nil {
			return Exported{}, err
		}
	}
	return Exported{Queue: r.Queue, Message: m}, nil
}

// jsonError words encoding/json's type errors, which name Go types, in
// terms of JSON.
func jsonError(err error) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err
	}
	want := "object"
	switch te.Type.Kind() {
	case reflect.String:
		want = "string"
	case reflect.Bool:
		want = "boolean"
	case reflect.Slice:
		want = "array"
	}
	if te.Field == "" {
		return fmt.Errorf("JSON %s, want an object", te.Value)
	}
	return fmt.Errorf("%s: JSON %s, want %s", te.Field, te.Value, want)
}

func decodeTable(path string, m map[string]json.RawMessage) (acemq.Table, error) {
	t := make(acemq.Table, len(m))
	for k, raw := range m {
		v, err := decodeValue(keyPath(path, k), raw)
		if err != nil {
			return nil, err
		}
		t[k] = v
	}
	return t, nil
}

func decodeValue(path string, raw json.RawMessage) (any, error) {
	var ev exportedValue
	if err := unmarshalJSON(raw, "object", &ev); err != nil {
		return nil, fmt.Errorf("header %s: %w", path, err)
	}
	switch ev.Type {
	case "table":
		var m map[string]json.RawMessage
		if err := unmarshalJSON(ev.Value, "object", &m); err != nil {
			return nil, fmt.Errorf("header %s: table: %w", path, err)
		}
		return decodeTable(path, m)
	case "array":
		var l []json.RawMessage
		if err := unmarshalJSON(ev.Value, "array", &l); err != nil {
			return nil, fmt.Errorf("header %s: array: %w", path, err)
		}
		a := make([]any, len(l))
		for i, e := range l {
			v, err := decodeValue(fmt.Sprintf("%s[%d]", path, i), e)
			if err != nil {
				return nil, err
			}
			a[i] = v
		}
		return a, nil
	}
	v, err := decodeScalar(ev)
	switch {
	case errors.Is(err, errUnknownType):
		return nil, fmt.Errorf("header %s: unknown type %q", path, ev.Type)
	case err != nil:
		return nil, fmt.Errorf("header %s: %s: %w", path, ev.Type, err)
	}
	return v, nil
}

// intTypes are the AMQP integer types: their range and their Go type.
var intTypes = map[string]struct {
	min, max int64
	convert  func(int64) any
}{
	"long":          {math.MinInt64, math.MaxInt64, func(n int64) any { return n }},
	"signedint":     {math.MinInt32, math.MaxInt32, func(n int64) any { return int32(n) }},
	"short":         {math.MinInt16, math.MaxInt16, func(n int64) any { return int16(n) }},
	"byte":          {math.MinInt8, math.MaxInt8, func(n int64) any { return int8(n) }},
	"unsignedbyte":  {0, math.MaxUint8, func(n int64) any { return uint8(n) }},
	"unsignedshort": {0, math.MaxUint16, func(n int64) any { return uint16(n) }},
	"unsignedint":   {0, math.MaxUint32, func(n int64) any { return uint32(n) }},
}

// errUnknownType is decodeScalar's answer to a type name it does not know.
var errUnknownType = errors.New("unknown type")

// decodeScalar decodes a value that holds no other values.
func decodeScalar(ev exportedValue) (any, error) {
	if ev.Base64 != nil && ev.Type != "longstr" {
		return nil, errors.New(`"base64" is only for a longstr`)
	}
	if it, ok := intTypes[ev.Type]; ok {
		n, err := parseInt(ev.Value, it.min, it.max)
		if err != nil {
			return nil, err
		}
		return it.convert(n), nil
	}
	switch ev.Type {
	case "longstr":
		if ev.Base64 == nil {
			var s string
			err := unmarshalJSON(ev.Value, "string", &s)
			return s, err
		}
		if ev.Value != nil {
			return nil, errors.New(`both "value" and "base64"`)
		}
		b, err := unquoteBase64(ev.Base64)
		return string(b), err
	case "float", "double":
		var s string
		if err := unmarshalJSON(ev.Value, "string", &s); err != nil {
			return nil, err
		}
		bits := 64
		if ev.Type == "float" {
			bits = 32
		}
		f, err := strconv.ParseFloat(s, bits)
		switch {
		case errors.Is(err, strconv.ErrRange):
			return nil, fmt.Errorf("%q is out of range", s)
		case err != nil:
			return nil, fmt.Errorf("%q is not a number", s)
		case bits == 32:
			return float32(f), nil
		}
		return f, nil
	case "bool":
		var b bool
		err := unmarshalJSON(ev.Value, "boolean", &b)
		return b, err
	case "binary":
		return unquoteBase64(ev.Value)
	case "timestamp":
		var s string
		if err := unmarshalJSON(ev.Value, "string", &s); err != nil {
			return nil, err
		}
		return parseTimestamp(s)
	case "decimal":
		var d exportedDecimal
		if err := unmarshalJSON(ev.Value, "object", &d); err != nil {
			return nil, err
		}
		scale, err := parseInt(d.Scale, 0, math.MaxUint8)
		if err != nil {
			return nil, fmt.Errorf("scale: %w", err)
		}
		value, err := parseInt(d.Value, math.MinInt32, math.MaxInt32)
		if err != nil {
			return nil, fmt.Errorf("value: %w", err)
		}
		return amqp.Decimal{Scale: uint8(scale), Value: int32(value)}, nil
	case "void":
		if ev.Value != nil && string(ev.Value) != "null" {
			return nil, errors.New("has a value")
		}
		return nil, nil
	}
	return nil, errUnknownType
}

// parseInt reads an integer from its JSON text, as json.Number does, never
// through a float64, which rounds integers beyond 2^53.
func parseInt(raw json.RawMessage, lo, hi int64) (int64, error) {
	if err := wantJSON(raw, "number"); err != nil {
		return 0, err
	}
	n, err := json.Number(raw).Int64()
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%s is not an integer", raw)
	}
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%s is out of range %d to %d", raw, lo, hi)
	}
	return n, nil
}

// unquoteBase64 decodes a JSON string of standard base64. A string without
// escapes (any the Encoder wrote) is decoded in place, not copied first.
func unquoteBase64(raw json.RawMessage) ([]byte, error) {
	if err := wantJSON(raw, "string"); err != nil {
		return nil, err
	}
	s := raw[1 : len(raw)-1]
	if bytes.IndexByte(s, '\\') >= 0 {
		var u string
		if err := json.Unmarshal(raw, &u); err != nil {
			return nil, err
		}
		s = []byte(u)
	}
	b := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
	n, err := base64.StdEncoding.Decode(b, s)
	if err != nil {
		return nil, fmt.Errorf("not base64: %w", err)
	}
	return b[:n], nil
}

// unmarshalJSON decodes a value of the given JSON kind into v, refusing
// fields v does not have.
func unmarshalJSON(raw json.RawMessage, kind string, v any) error {
	if err := wantJSON(raw, kind); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return jsonError(dec.Decode(v))
}

// wantJSON checks the kind of a JSON value up front, for an error in terms
// of JSON rather than of the Go type it is decoded into.
func wantJSON(raw json.RawMessage, kind string) error {
	if raw == nil {
		return errors.New("no value")
	}
	got := "number"
	switch raw[0] {
	case '"':
		got = "string"
	case '{':
		got = "object"
	case '[':
		got = "array"
	case 't', 'f':
		got = "boolean"
	case 'n':
		got = "null"
	}
	if got != kind {
		return fmt.Errorf("JSON %s, want %s", got, kind)
	}
	return nil
}

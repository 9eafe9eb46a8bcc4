package deadletter

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq/transport"
)

// exportGoldenLine is the export of exportGolden, byte for byte: it pins the format.
const exportGoldenLine = `{"format":"acemq-export/1","queue":"orders.new.dlq",` +
	`"properties":{"contentType":"application/json","messageId":"m-1","timestamp":"2023-11-14T22:13:20Z","persistent":true},` +
	`"headers":{"x-attempts":{"type":"signedint","value":3},"x-reason":{"type":"longstr","value":"<rejected & requeued>"}},` +
	`"body":"eyJpZCI6MX0="}` + "\n"

var exportGolden = Exported{
	Queue: "orders.new.dlq",
	Message: transport.Message{
		Headers:     transport.Table{"x-attempts": int32(3), "x-reason": "<rejected & requeued>"},
		ContentType: "application/json",
		MessageID:   "m-1",
		Timestamp:   time.Unix(1700000000, 0),
		Persistent:  true,
		Body:        []byte(`{"id":1}`),
	},
}

// richExport has every property set and a header of every type, at its
// limits, nested in tables and arrays.
func richExport() Exported {
	negZero := math.Copysign(0, -1)
	return Exported{
		Queue: "orders.new.dlq",
		Message: transport.Message{
			Headers: transport.Table{
				"longstr":         "dead-lettered <&> ünïcode \u2028 \x00",
				"longstr-empty":   "",
				"longstr-binary":  "\xff\xfe not UTF-8",
				"long-min":        int64(math.MinInt64),
				"long-max":        int64(math.MaxInt64),
				"signedint-min":   int32(math.MinInt32),
				"signedint-max":   int32(math.MaxInt32),
				"short-min":       int16(math.MinInt16),
				"short-max":       int16(math.MaxInt16),
				"byte-min":        int8(math.MinInt8),
				"byte-max":        int8(math.MaxInt8),
				"unsignedbyte":    uint8(0),
				"unsignedbyte-mx": uint8(math.MaxUint8),
				"unsignedshort":   uint16(math.MaxUint16),
				"unsignedint":     uint32(math.MaxUint32),
				"float":           float32(0.1),
				"float-nan":       float32(math.NaN()),
				"float-inf":       float32(math.Inf(1)),
				"float-neg-inf":   float32(math.Inf(-1)),
				"float-neg-zero":  float32(negZero),
				"float-max":       float32(math.MaxFloat32),
				"float-tiny":      float32(math.SmallestNonzeroFloat32),
				"double":          0.1,
				"double-nan":      math.NaN(),
				"double-inf":      math.Inf(1),
				"double-neg-inf":  math.Inf(-1),
				"double-neg-zero": negZero,
				"double-max":      math.MaxFloat64,
				"double-tiny":     math.SmallestNonzeroFloat64,
				"bool-true":       true,
				"bool-false":      false,
				"binary":          []byte{0, 1, 0xfe, 0xff},
				"binary-empty":    []byte{},
				"timestamp":       time.Unix(1700000000, 0),
				"timestamp-epoch": time.Unix(0, 0),
				"timestamp-old":   time.Unix(-1, 0),
				"void":            nil,
				"decimal":         amqp.Decimal{Scale: 2, Value: -12345},
				"decimal-max":     amqp.Decimal{Scale: math.MaxUint8, Value: math.MaxInt32},
				"table-empty":     transport.Table{},
				"array-empty":     []any{},
				"x-death": []any{
					transport.Table{
						"count":        int64(2),
						"reason":       "rejected",
						"queue":        "orders.new",
						"time":         time.Unix(1700000000, 0),
						"routing-keys": []any{"orders.new", "orders.retry"},
						"deeper": transport.Table{
							"list":  []any{nil, []byte("x"), transport.Table{}, []any{int8(-1), uint16(7)}},
							"empty": transport.Table{},
						},
					},
					"second", float32(negZero), amqp.Decimal{},
				},
			},
			ContentType:     "application/json",
			ContentEncoding: "gzip",
			MessageID:       "m-1",
			CorrelationID:   "c-1",
			ReplyTo:         "amq.rabbitmq.reply-to",
			Type:            "order.created",
			Timestamp:       time.Unix(1700000000, 0),
			Persistent:      true,
			Expiration:      "60000",
			Priority:        math.MaxUint8,
			AppID:           "shop",
			UserID:          "guest",
			Body:            []byte{0xff, 0x00, 0xfe, '<', '\n', 0x80, '"'},
		},
	}
}

// canonicalExport makes an export comparable with reflect.DeepEqual: a float
// becomes its bits (NaN is not equal to itself, and 0 == -0 would hide a
// lost sign), a time its UTC form.
func canonicalExport(x Exported) Exported {
	x.Message.Timestamp = x.Message.Timestamp.UTC()
	x.Message.Headers = canonicalValue(x.Message.Headers).(transport.Table)
	return x
}

func canonicalValue(v any) any {
	switch v := v.(type) {
	case float32:
		if v != v {
			return "NaN"
		}
		return fmt.Sprintf("float32 %#x", math.Float32bits(v))
	case float64:
		if v != v {
			return "NaN"
		}
		return fmt.Sprintf("float64 %#x", math.Float64bits(v))
	case time.Time:
		return v.UTC()
	case transport.Table:
		if v == nil {
			return v
		}
		t := make(transport.Table, len(v))
		for k, e := range v {
			t[k] = canonicalValue(e)
		}
		return t
	case []any:
		if v == nil {
			return v
		}
		a := make([]any, len(v))
		for i, e := range v {
			a[i] = canonicalValue(e)
		}
		return a
	}
	return v
}

func encodeLines(t *testing.T, xs ...Exported) string {
	t.Helper()
	var b bytes.Buffer
	enc := NewEncoder(&b)
	for _, x := range xs {
		if err := enc.Encode(x); err != nil {
			t.Fatalf("Encode: %v", err)
		}
	}
	return b.String()
}

func TestRecordRoundTrip(t *testing.T) {
	rich := richExport()
	withBody := func(x Exported, body []byte) Exported {
		x.Message.Body = body
		return x
	}
	withHeaders := func(x Exported, h transport.Table) Exported {
		x.Message.Headers = h
		return x
	}
	plain := Exported{Queue: "q", Message: transport.Message{Body: []byte("x")}}
	tests := []struct {
		name string
		in   Exported
		want *Exported // nil: the same as in
	}{
		{name: "rich", in: rich},
		{name: "golden", in: exportGolden},
		{name: "no headers stay nil", in: plain},
		{name: "empty headers stay empty", in: withHeaders(plain, transport.Table{})},
		{name: "empty body", in: withBody(plain, []byte{})},
		{name: "2 MiB body, beyond a bufio.Scanner line (64 KiB)", in: withBody(plain, bytes.Repeat([]byte{0, 0xff, '\n', 'a', 0x80, '"', '\\', 0xc3}, 1<<18))},
		{name: "nil body comes back empty", in: withBody(plain, nil), want: refExport(withBody(plain, []byte{}))},
		{name: "zero message", in: Exported{}, want: refExport(Exported{Message: transport.Message{Body: []byte{}}})},
		{
			name: "map[string]any comes back a Table",
			in:   withHeaders(plain, transport.Table{"m": map[string]any{"a": "b"}}),
			want: refExport(withHeaders(plain, transport.Table{"m": transport.Table{"a": "b"}})),
		},
		{
			name: "nil nested table comes back empty",
			in:   withHeaders(plain, transport.Table{"t": transport.Table(nil)}),
			want: refExport(withHeaders(plain, transport.Table{"t": transport.Table{}})),
		},
		{
			name: "nil array comes back empty",
			in:   withHeaders(plain, transport.Table{"a": []any(nil)}),
			want: refExport(withHeaders(plain, transport.Table{"a": []any{}})),
		},
		{
			name: "amqp.Table comes back a Table",
			in:   withHeaders(plain, transport.Table{"t": amqp.Table{"n": int64(1)}}),
			want: refExport(withHeaders(plain, transport.Table{"t": transport.Table{"n": int64(1)}})),
		},
		{
			name: "nil binary comes back empty",
			in:   withHeaders(plain, transport.Table{"b": []byte(nil)}),
			want: refExport(withHeaders(plain, transport.Table{"b": []byte{}})),
		},
		{
			name: "timestamps are cut to the second",
			in: Exported{Queue: "q", Message: transport.Message{
				Headers:   transport.Table{"t": time.Unix(1700000000, 999999999)},
				Timestamp: time.Unix(1700000000, 5),
				Body:      []byte{},
			}},
			want: &Exported{Queue: "q", Message: transport.Message{
				Headers:   transport.Table{"t": time.Unix(1700000000, 0)},
				Timestamp: time.Unix(1700000000, 0),
				Body:      []byte{},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := encodeLines(t, tt.in)
			if strings.Count(line, "\n") != 1 || !strings.HasSuffix(line, "\n") {
				t.Fatalf("Encode wrote %q, want one line", clip(line))
			}
			got, err := NewDecoder(strings.NewReader(line)).Decode()
			if err != nil {
				t.Fatalf("Decode(%s): %v", clip(line), err)
			}
			want := tt.in
			if tt.want != nil {
				want = *tt.want
			}
			if !reflect.DeepEqual(canonicalExport(got), canonicalExport(want)) {
				t.Errorf("round trip of\n%s\ngot  %s\nwant %s", clip(line), clip(fmt.Sprintf("%#v", got)), clip(fmt.Sprintf("%#v", want)))
			}
		})
	}
}

func refExport(x Exported) *Exported { return &x }

// clip keeps a failure's output readable when the body is megabytes long.
func clip(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "..."
	}
	return s
}

func TestRecordTypesExact(t *testing.T) {
	// DeepEqual above compares types too; this says which one went wrong.
	rich := richExport()
	got, err := NewDecoder(strings.NewReader(encodeLines(t, rich))).Decode()
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range rich.Message.Headers {
		if g := got.Message.Headers[k]; reflect.TypeOf(g) != reflect.TypeOf(v) {
			t.Errorf("header %q: got %T, want %T", k, g, v)
		}
	}
}

func TestEncodeGolden(t *testing.T) {
	if got := encodeLines(t, exportGolden); got != exportGoldenLine {
		t.Errorf("Encode wrote\n%s\nwant\n%s", got, exportGoldenLine)
	}
}

func TestDecodeStream(t *testing.T) {
	msgs := []Exported{exportGolden, richExport(), {Queue: "q2", Message: transport.Message{Body: []byte("last")}}}
	for _, tail := range []string{"", "\n", "\n  \n"} {
		input := encodeLines(t, msgs...) + tail
		if n := strings.Count(input, "\n") - strings.Count(tail, "\n"); n != len(msgs) {
			t.Fatalf("%d lines for %d messages", n, len(msgs))
		}
		d := NewDecoder(strings.NewReader(input))
		for i, want := range msgs {
			got, err := d.Decode()
			if err != nil {
				t.Fatalf("tail %q: record %d: %v", tail, i+1, err)
			}
			if !reflect.DeepEqual(canonicalExport(got), canonicalExport(want)) {
				t.Errorf("tail %q: record %d: got %#v, want %#v", tail, i+1, got, want)
			}
		}
		for range 2 {
			if _, err := d.Decode(); err != io.EOF {
				t.Fatalf("tail %q: after the last record: %v, want io.EOF", tail, err)
			}
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	// header makes a line whose only header is x with the given typed value.
	header := func(typed string) string {
		return `{"format":"acemq-export/1","queue":"q","properties":{},"headers":{"x":` + typed + `},"body":""}`
	}
	tests := []struct {
		name string
		line string
		want string
	}{
		{"truncated JSON", `{"format":"acemq-export/1","queue":`, "unexpected EOF"},
		{"not JSON", `hello`, "invalid character 'h'"},
		{"not an object", `42`, "JSON number, want an object"},
		{"wrong format", `{"format":"acemq-export/2","queue":"q","body":"","extra":1}`, `format "acemq-export/2", want "acemq-export/1"`},
		{"no format", `{"queue":"q","body":""}`, `no "format"`},
		{"unknown field", `{"format":"acemq-export/1","queue":"q","bogus":1,"body":""}`, `unknown field "bogus"`},
		{"no body", `{"format":"acemq-export/1","queue":"q"}`, `no "body"`},
		{"body null", `{"format":"acemq-export/1","queue":"q","body":null}`, "body: JSON null, want string"},
		{"bad base64 body", `{"format":"acemq-export/1","queue":"q","body":"not base64!"}`, "body: not base64"},
		{"persistent not bool", `{"format":"acemq-export/1","properties":{"persistent":"yes"},"body":""}`, "properties.persistent: JSON string, want boolean"},
		{"priority too big", `{"format":"acemq-export/1","properties":{"priority":256},"body":""}`, "properties.priority: 256 is out of range 0 to 255"},
		{"timestamp with fraction", `{"format":"acemq-export/1","properties":{"timestamp":"2023-11-14T22:13:20.5Z"},"body":""}`, "properties.timestamp: \"2023-11-14T22:13:20.5Z\" is not RFC 3339 in UTC and whole seconds"},
		{"unknown type", header(`{"type":"bigint","value":1}`), `header "x": unknown type "bigint"`},
		{"unknown field in a value", header(`{"type":"long","value":1,"unit":"s"}`), `header "x": json: unknown field "unit"`},
		{"type not a string", header(`{"type":5}`), `header "x": type: JSON number, want string`},
		{"value null", `{"format":"acemq-export/1","headers":{"x":null},"body":""}`, `header "x": JSON null, want object`},
		{"byte of 300", header(`{"type":"byte","value":300}`), `header "x": byte: 300 is out of range -128 to 127`},
		{"long beyond int64", header(`{"type":"long","value":9223372036854775808}`), `header "x": long: 9223372036854775808 is out of range`},
		{"negative unsignedint", header(`{"type":"unsignedint","value":-1}`), `header "x": unsignedint: -1 is out of range 0 to 4294967295`},
		{"integer with a fraction", header(`{"type":"signedint","value":1.5}`), `header "x": signedint: 1.5 is not an integer`},
		{"integer as a string", header(`{"type":"short","value":"1"}`), `header "x": short: JSON string, want number`},
		{"no value", header(`{"type":"longstr"}`), `header "x": longstr: no value`},
		{"float as a number", header(`{"type":"double","value":1.5}`), `header "x": double: JSON number, want string`},
		{"float not a number", header(`{"type":"double","value":"one"}`), `header "x": double: "one" is not a number`},
		{"float out of range", header(`{"type":"float","value":"1e39"}`), `header "x": float: "1e39" is out of range`},
		{"bad base64 binary", header(`{"type":"binary","value":"@@"}`), `header "x": binary: not base64`},
		{"bad base64 longstr", header(`{"type":"longstr","base64":"@@"}`), `header "x": longstr: not base64`},
		{"longstr with value and base64", header(`{"type":"longstr","value":"a","base64":"YQ=="}`), `both "value" and "base64"`},
		{"base64 on a long", header(`{"type":"long","base64":"YQ=="}`), `"base64" is only for a longstr`},
		{"timestamp not UTC", header(`{"type":"timestamp","value":"2023-11-14T23:13:20+01:00"}`), `header "x": timestamp: "2023-11-14T23:13:20+01:00" is not RFC 3339`},
		{"void with a value", header(`{"type":"void","value":1}`), `header "x": void: has a value`},
		{"decimal scale out of range", header(`{"type":"decimal","value":{"scale":256,"value":1}}`), `header "x": decimal: scale: 256 is out of range 0 to 255`},
		{"decimal without value", header(`{"type":"decimal","value":{"scale":2}}`), `header "x": decimal: value: no value`},
		{"table not an object", header(`{"type":"table","value":[]}`), `header "x": table: JSON array, want object`},
		{"array not a list", header(`{"type":"array","value":{}}`), `header "x": array: JSON object, want array`},
		{"error in a nested table", header(`{"type":"table","value":{"n":{"type":"byte","value":300}}}`), `header "x"["n"]: byte: 300 is out of range`},
		{"error in an array", header(`{"type":"array","value":[{"type":"void"},{"type":"bool","value":1}]}`), `header "x"[1]: bool: JSON number, want boolean`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The bad line is the second: the error must say so.
			_, err := decodeSecondRecord(t, exportGoldenLine+tt.line+"\n")
			if err == nil {
				t.Fatalf("Decode(%s) succeeded", tt.line)
			}
			if !strings.Contains(err.Error(), "record 2: ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Decode(%s):\n%v\nwant it to name record 2 and say %s", tt.line, err, tt.want)
			}
		})
	}
}

func decodeSecondRecord(t *testing.T, input string) (Exported, error) {
	t.Helper()
	d := NewDecoder(strings.NewReader(input))
	if _, err := d.Decode(); err != nil {
		t.Fatalf("record 1: %v", err)
	}
	return d.Decode()
}

func TestDecodeAfterError(t *testing.T) {
	tests := []struct {
		name   string
		bad    string
		sticky bool // the error repeats instead of the next record
	}{
		{"bad record goes on to the next", `{"format":"acemq-export/1","headers":{"x":{"type":"byte","value":300}},"body":""}`, false},
		{"wrong format goes on to the next", `{"format":"other","body":""}`, false},
		{"not JSON stops", `{"format":`, true},
		{"garbage stops", `}{`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDecoder(strings.NewReader(tt.bad + "\n" + exportGoldenLine))
			_, first := d.Decode()
			if first == nil {
				t.Fatal("bad record decoded")
			}
			x, err := d.Decode()
			if tt.sticky {
				if err == nil || err.Error() != first.Error() {
					t.Errorf("after %v: got %v, want the same error", first, err)
				}
				return
			}
			if err != nil || x.Message.MessageID != "m-1" {
				t.Errorf("after %v: got %v, %v, want the next record", first, x, err)
			}
		})
	}
}

func TestEncodeErrors(t *testing.T) {
	type unsupported struct{ A int }
	withHeaders := func(h transport.Table) Exported {
		return Exported{Queue: "q", Message: transport.Message{Headers: h}}
	}
	tests := []struct {
		name string
		in   Exported
		want string
	}{
		{"struct", withHeaders(transport.Table{"x-custom": unsupported{1}}), `header "x-custom": Go type deadletter.unsupported has no AMQP type`},
		{"Go int", withHeaders(transport.Table{"n": 1}), `header "n": Go type int has no AMQP type`},
		{"uint64", withHeaders(transport.Table{"n": uint64(1)}), `header "n": Go type uint64`},
		{"in an array in a table", withHeaders(transport.Table{"t": transport.Table{"a": []any{"ok", struct{}{}}}}), `header "t"["a"][1]: Go type struct {}`},
		{"name not UTF-8", withHeaders(transport.Table{"\xff": "v"}), `header "\xff": the name is not UTF-8`},
		{"property not UTF-8", Exported{Message: transport.Message{MessageID: "\xfe"}}, `messageId "\xfe" is not UTF-8`},
		{"queue not UTF-8", Exported{Queue: "q\xff"}, `queue "q\xff" is not UTF-8`},
		{"header timestamp beyond RFC 3339", withHeaders(transport.Table{"t": time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}), `header "t": 10000-01-01 00:00:00 +0000 UTC is outside the years 0000 to 9999`},
		{"timestamp beyond RFC 3339", Exported{Message: transport.Message{Timestamp: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)}}, "timestamp: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			err := NewEncoder(&b).Encode(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Encode: %v, want an error saying %s", err, tt.want)
			}
			if b.Len() != 0 {
				t.Errorf("Encode wrote %q with its error", b.String())
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	// A small seed with a header of every type: the fuzzer spends long
	// minimizing what it finds in a big one, such as richExport's.
	var every bytes.Buffer
	err := NewEncoder(&every).Encode(Exported{Queue: "q", Message: transport.Message{
		Headers: transport.Table{
			"a": "s", "b": int64(1), "c": int32(1), "d": int16(1), "e": int8(1),
			"f": uint8(1), "g": uint16(1), "h": uint32(1), "i": float32(1), "j": 1.0,
			"k": true, "l": []byte{1}, "m": time.Unix(0, 0), "n": amqp.Decimal{Scale: 1, Value: 1},
			"o": transport.Table{"p": nil}, "q": []any{"\xff"},
		},
		Timestamp: time.Unix(0, 0),
		Priority:  1,
		Body:      []byte{0xff},
	}})
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		exportGoldenLine,
		every.String(),
		exportGoldenLine + "\n" + every.String() + "\n",
		`{"format":"acemq-export/1","headers":{"x":{"type":"array","value":[{"type":"table","value":{}}]}},"body":""}`,
		`{"format":"acemq-export/1","headers":{"f":{"type":"float","value":"-0"},"d":{"type":"double","value":"1e-400"}},"body":"QQ=="}`,
		`{"format":"acemq-export/1","properties":{"priority":-0},"body":"QR=="}`,
		`{"format":"acemq-export/1","headers":{"s":{"type":"longstr","base64":"/w=="}},"body":"\u0051\u0051=="}`,
		`{"format":"acemq-export/1","headers":{"d":{"type":"decimal","value":{"scale":1,"value":-5}}},"body":""}`,
		"{}\n[]\nnull\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := NewDecoder(bytes.NewReader(data))
		for {
			x, err := d.Decode()
			if err != nil {
				return
			}
			var b bytes.Buffer
			if err := NewEncoder(&b).Encode(x); err != nil {
				t.Fatalf("decoded %#v, which does not encode: %v", x, err)
			}
			y, err := NewDecoder(&b).Decode()
			if err != nil {
				t.Fatalf("re-encoded %s, which does not decode: %v", b.String(), err)
			}
			if !reflect.DeepEqual(canonicalExport(x), canonicalExport(y)) {
				t.Fatalf("decoded %#v\nre-encoded %s\ndecoded again %#v", x, b.String(), y)
			}
		}
	})
}

package memory

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq/transport"
)

// A table goes through memory:// as it would through amqp091 and RabbitMQ:
// what amqp091 cannot encode is refused, and what arrives has the types
// amqp091 decodes (a Go int goes out as a 32-bit AMQP int, a time.Time loses
// everything below the second, a map[string]any or an amqp.Table comes back
// a Table). RabbitMQ 3.10 and 4.0 take every type amqp091 encodes, an
// amqp.Decimal of any scale and value included, and deliver it unchanged.

// wireTable returns the table as it arrives after a trip over the wire, or
// amqp091's error for a value it cannot encode. Empty stays empty (not nil):
// the caller decides whether an empty table is sent at all.
func wireTable(t transport.Table) (transport.Table, error) {
	if t == nil {
		return nil, nil
	}
	out := make(transport.Table, len(t))
	for k, v := range t {
		if len(k) > 255 {
			return nil, fmt.Errorf("table field name %q exceeds 255 bytes (an AMQP short string)", k)
		}
		w, err := wireValue(v)
		if err != nil {
			return nil, fmt.Errorf("table field %q %w", k, err)
		}
		out[k] = w
	}
	return out, nil
}

func wireValue(v any) (any, error) {
	switch v := v.(type) {
	case nil, bool, int8, int16, int32, int64, uint8, uint16, uint32, float32, float64, string, amqp.Decimal:
		return v, nil
	case int:
		return int32(v), nil // amqp091 writes a Go int as 'I', a signed 32-bit int
	case []byte:
		return append([]byte{}, v...), nil
	case time.Time:
		return time.Unix(v.Unix(), 0), nil
	case transport.Table:
		return wireTable(v)
	case map[string]any:
		return wireTable(transport.Table(v))
	case amqp.Table:
		return wireTable(transport.Table(v))
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			w, err := wireValue(e)
			if err != nil {
				return nil, fmt.Errorf("in array %w", err)
			}
			out[i] = w
		}
		return out, nil
	}
	return nil, fmt.Errorf("value %T not supported", v)
}

// copyTable deep-copies a table already in wire form, so that neither the
// publisher nor a consumer can change what the broker holds.
func copyTable(t transport.Table) transport.Table {
	if t == nil {
		return nil
	}
	out := make(transport.Table, len(t))
	for k, v := range t {
		out[k] = copyValue(v)
	}
	return out
}

func copyValue(v any) any {
	switch v := v.(type) {
	case []byte:
		return append([]byte{}, v...)
	case transport.Table:
		return copyTable(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = copyValue(e)
		}
		return out
	}
	return v
}

// amqpType is RabbitMQ's name of a wire value's type, as it prints it in
// errors ("received the value '5' of type 'long'").
func amqpType(v any) string {
	switch v.(type) {
	case string:
		return "longstr"
	case int64:
		return "long"
	case int32:
		return "signedint"
	case int16:
		return "short"
	case int8:
		return "byte"
	case uint8:
		return "unsignedbyte"
	case uint16:
		return "unsignedshort"
	case uint32:
		return "unsignedint"
	case float32:
		return "float"
	case float64:
		return "double"
	case bool:
		return "bool"
	case []byte:
		return "binary"
	case time.Time:
		return "timestamp"
	case amqp.Decimal:
		return "decimal"
	case transport.Table:
		return "table"
	case []any:
		return "array"
	case nil:
		return "void"
	}
	return fmt.Sprintf("%T", v)
}

// asInt returns an integer of any AMQP width as an int64.
func asInt(v any) (int64, bool) {
	switch v := v.(type) {
	case int64:
		return v, true
	case int32:
		return int64(v), true
	case int16:
		return int64(v), true
	case int8:
		return int64(v), true
	case uint8:
		return int64(v), true
	case uint16:
		return int64(v), true
	case uint32:
		return int64(v), true
	}
	return 0, false
}

func asFloat(v any) (float64, bool) {
	switch v := v.(type) {
	case float32:
		return float64(v), true
	case float64:
		return v, true
	}
	return 0, false
}

// typeClass is RabbitMQ's equivalence class of a type: integers of every
// width and timestamps are one class, both floats another, and a long
// string and a byte array are alike.
func typeClass(v any) string {
	if _, ok := asInt(v); ok {
		return "int"
	}
	switch v.(type) {
	case time.Time:
		return "int"
	case float32, float64:
		return "float"
	case []byte:
		return "longstr"
	}
	return amqpType(v)
}

// sameArg is RabbitMQ's comparison of two argument values on redeclaration:
// the same type class and the same value.
func sameArg(a, b any) bool {
	if typeClass(a) != typeClass(b) {
		return false
	}
	switch typeClass(a) {
	case "int":
		return intValue(a) == intValue(b)
	case "float":
		x, _ := asFloat(a)
		y, _ := asFloat(b)
		return x == y
	case "longstr":
		return stringValue(a) == stringValue(b)
	}
	return equalValue(a, b)
}

func intValue(v any) int64 {
	if t, ok := v.(time.Time); ok {
		return t.Unix()
	}
	n, _ := asInt(v)
	return n
}

func stringValue(v any) string {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	s, _ := v.(string)
	return s
}

func equalValue(a, b any) bool {
	switch a := a.(type) {
	case transport.Table:
		b, ok := b.(transport.Table)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			w, ok := b[k]
			if !ok || amqpType(v) != amqpType(w) || !sameArg(v, w) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if amqpType(a[i]) != amqpType(b[i]) || !sameArg(a[i], b[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

// formatValue prints a value as RabbitMQ does in its messages: Erlang's ~s
// for a string, ~p for the rest (1000, true, 1.0e3, and a table or an array
// as the Erlang terms RabbitMQ holds).
func formatValue(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return erlangTerm(v)
}

// erlangTerm prints a wire value as Erlang's ~p prints what RabbitMQ parsed
// it into: a table is [{<<"key">>,type,value}], an array [{type,value}].
func erlangTerm(v any) string {
	switch v := v.(type) {
	case string:
		return erlangBinary([]byte(v))
	case []byte:
		return erlangBinary(v)
	case bool:
		return strconv.FormatBool(v)
	case time.Time:
		return strconv.FormatInt(v.Unix(), 10) // a timestamp is its seconds
	case nil:
		return "undefined"
	case amqp.Decimal:
		// RabbitMQ reads a decimal's value as unsigned: -5 is 4294967291.
		return fmt.Sprintf("{%d,%d}", v.Scale, uint32(v.Value))
	case float32:
		return erlangFloat(float64(v))
	case float64:
		return erlangFloat(v)
	case transport.Table:
		parts := make([]string, 0, len(v))
		for _, k := range slices.Sorted(maps.Keys(v)) {
			parts = append(parts, "{"+erlangBinary([]byte(k))+","+amqpType(v[k])+","+erlangTerm(v[k])+"}")
		}
		return "[" + strings.Join(parts, ",") + "]"
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = "{" + amqpType(e) + "," + erlangTerm(e) + "}"
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	if n, ok := asInt(v); ok {
		return strconv.FormatInt(n, 10)
	}
	return fmt.Sprint(v)
}

// erlangBinary is ~p of a binary: <<"text">> when printable, else its bytes.
func erlangBinary(b []byte) string {
	printable := true
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			printable = false
			break
		}
	}
	if printable {
		return "<<" + strconv.Quote(string(b)) + ">>"
	}
	parts := make([]string, len(b))
	for i, c := range b {
		parts[i] = strconv.Itoa(int(c))
	}
	return "<<" + strings.Join(parts, ",") + ">>"
}

// erlangFloat is Erlang's shortest printing of a float (io_lib_format's
// fwrite_g): 1.5, 0.001, 100.0, 1.0e3.
func erlangFloat(f float64) string {
	if f == 0 {
		return "0.0"
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, 64), "e")
	digits := strings.Replace(mant, ".", "", 1)
	e, _ := strconv.Atoi(exp)
	place := e + 1 // the value is 0.digits times ten to the place
	l := len(digits)
	if place >= 0 && place < l && place != 0 {
		return sign + digits[:place] + "." + digits[place:]
	}
	if place == 0 {
		return sign + "0." + digits
	}
	expL := strconv.Itoa(place - 1)
	expDot := 1
	if l == 1 {
		expDot = 2
	}
	expCost := len(expL) + 1 + expDot
	switch {
	case place < 0 && 2-place <= expCost:
		return sign + "0." + strings.Repeat("0", -place) + digits
	case place >= l && place-l+2 <= expCost:
		return sign + digits + strings.Repeat("0", place-l) + ".0"
	}
	if l == 1 {
		return sign + digits + ".0e" + expL
	}
	return sign + digits[:1] + "." + digits[1:] + "e" + expL
}

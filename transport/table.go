package transport

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// FormatTable renders a table with its keys sorted, strings quoted, nested
// tables and arrays in the same style, bytes in hex and times in RFC 3339:
// {x-dead-letter-exchange: "acemq.retry", x-message-ttl: 40000}.
func FormatTable(t Table) string {
	var b strings.Builder
	formatValue(&b, t)
	return b.String()
}

func formatValue(b *strings.Builder, v any) {
	switch v := v.(type) {
	case Table:
		formatTable(b, v)
	case map[string]any:
		formatTable(b, v)
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteString(", ")
			}
			formatValue(b, e)
		}
		b.WriteByte(']')
	case string:
		fmt.Fprintf(b, "%q", v)
	case []byte:
		fmt.Fprintf(b, "0x%x", v)
	case time.Time:
		b.WriteString(v.UTC().Format(time.RFC3339))
	default:
		fmt.Fprintf(b, "%v", v)
	}
}

func formatTable(b *strings.Builder, t map[string]any) {
	b.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(t)) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k)
		b.WriteString(": ")
		formatValue(b, t[k])
	}
	b.WriteByte('}')
}

// The JSON forms below are what `acemq ladder --json` and `acemq topology
// plan --json` print, one object per declaration with its kind.

func (e Exchange) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Kind    string       `json:"kind"`
		Name    string       `json:"name"`
		Type    ExchangeType `json:"type"`
		Durable bool         `json:"durable"`
	}{e.Kind(), e.Name, e.Type, e.Durable})
}

func (q Queue) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Kind       string    `json:"kind"`
		Name       string    `json:"name"`
		Type       QueueType `json:"type"`
		Durable    bool      `json:"durable"`
		Exclusive  bool      `json:"exclusive"`
		AutoDelete bool      `json:"autoDelete"`
		Arguments  Table     `json:"arguments"`
	}{q.Kind(), q.Name, q.Type, q.Durable, q.Exclusive, q.AutoDelete, q.WireArguments()})
}

func (b Binding) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Kind       string `json:"kind"`
		Queue      string `json:"queue"`
		Exchange   string `json:"exchange"`
		RoutingKey string `json:"routingKey"`
	}{b.Kind(), b.Queue, b.Exchange, b.RoutingKey})
}

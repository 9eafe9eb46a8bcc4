package transport

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// FormatTable renders a table with its keys sorted, strings quoted:
// {x-dead-letter-exchange: "acemq.retry", x-message-ttl: 40000}.
func FormatTable(t Table) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(t)) {
		if i > 0 {
			b.WriteString(", ")
		}
		switch v := t[k].(type) {
		case string:
			fmt.Fprintf(&b, "%s: %q", k, v)
		default:
			fmt.Fprintf(&b, "%s: %v", k, v)
		}
	}
	b.WriteByte('}')
	return b.String()
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

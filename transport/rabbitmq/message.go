package rabbitmq

import (
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq/transport"
)

// toAMQPTable gives amqp091 a table it can encode: its own Table type
// all the way down, values keeping their Go type (an int64 goes out as an
// AMQP long). A table without nested tables or arrays (every publish's
// headers) is the same map under amqp091's name, not a copy: amqp091 only
// reads it while it encodes the frame. One with them is copied, nested
// tables converted, an amqp.Table too for the transport.Tables it may hold
// (memory:// takes them alike).
func toAMQPTable(t transport.Table) amqp.Table {
	for _, v := range t {
		if nested(v) {
			out := make(amqp.Table, len(t))
			for k, v := range t {
				out[k] = toAMQPValue(v)
			}
			return out
		}
	}
	return amqp.Table(t)
}

func nested(v any) bool {
	switch v.(type) {
	case transport.Table, map[string]any, amqp.Table, []any:
		return true
	}
	return false
}

func toAMQPValue(v any) any {
	switch v := v.(type) {
	case transport.Table:
		return toAMQPTable(v)
	case map[string]any:
		return toAMQPTable(v)
	case amqp.Table:
		return toAMQPTable(transport.Table(v))
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = toAMQPValue(e)
		}
		return out
	}
	return v
}

// fromAMQPTable turns a table amqp091 decoded into a transport.Table, in
// place: the map is the caller's own (a delivery's headers, decoded for
// it), and only its nested tables change type.
func fromAMQPTable(t amqp.Table) transport.Table {
	for k, v := range t {
		if nested(v) {
			t[k] = fromAMQPValue(v)
		}
	}
	return transport.Table(t)
}

func fromAMQPValue(v any) any {
	switch v := v.(type) {
	case amqp.Table:
		return fromAMQPTable(v)
	case []any:
		for i, e := range v {
			v[i] = fromAMQPValue(e)
		}
		return v
	}
	return v
}

func toPublishing(m transport.Message) amqp.Publishing {
	mode := amqp.Transient
	if m.Persistent {
		mode = amqp.Persistent
	}
	return amqp.Publishing{
		Headers:         toAMQPTable(m.Headers),
		ContentType:     m.ContentType,
		ContentEncoding: m.ContentEncoding,
		DeliveryMode:    mode,
		CorrelationId:   m.CorrelationID,
		ReplyTo:         m.ReplyTo,
		Expiration:      m.Expiration,
		MessageId:       m.MessageID,
		Timestamp:       m.Timestamp,
		Type:            m.Type,
		Priority:        m.Priority,
		AppId:           m.AppID,
		UserId:          m.UserID,
		Body:            m.Body,
	}
}

func fromDelivery(d amqp.Delivery) transport.Delivery {
	return transport.Delivery{
		Message: transport.Message{
			Headers:         fromAMQPTable(d.Headers),
			ContentType:     d.ContentType,
			ContentEncoding: d.ContentEncoding,
			MessageID:       d.MessageId,
			CorrelationID:   d.CorrelationId,
			ReplyTo:         d.ReplyTo,
			Type:            d.Type,
			Timestamp:       d.Timestamp,
			Persistent:      d.DeliveryMode == amqp.Persistent,
			Expiration:      d.Expiration,
			Priority:        d.Priority,
			AppID:           d.AppId,
			UserID:          d.UserId,
			Body:            d.Body,
		},
		Exchange:    d.Exchange,
		RoutingKey:  d.RoutingKey,
		Redelivered: d.Redelivered,
	}
}

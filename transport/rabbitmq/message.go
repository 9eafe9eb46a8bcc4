package rabbitmq

import (
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq/transport"
)

// toAMQPTable converts a table, nested tables and arrays included: amqp091
// only encodes its own Table type. Values keep their Go type, so an int64
// goes out as an AMQP long. An amqp.Table is converted too, for the
// transport.Tables it may hold (memory:// takes them alike).
func toAMQPTable(t transport.Table) amqp.Table {
	if t == nil {
		return nil
	}
	out := make(amqp.Table, len(t))
	for k, v := range t {
		out[k] = toAMQPValue(v)
	}
	return out
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

func fromAMQPTable(t amqp.Table) transport.Table {
	if t == nil {
		return nil
	}
	out := make(transport.Table, len(t))
	for k, v := range t {
		out[k] = fromAMQPValue(v)
	}
	return out
}

func fromAMQPValue(v any) any {
	switch v := v.(type) {
	case amqp.Table:
		return fromAMQPTable(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = fromAMQPValue(e)
		}
		return out
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

// Package harness runs the benchmark scenarios against RabbitMQ with each
// implementation (raw amqp091-go, AceMQ, Watermill) and collects timings.
package harness

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

// BodySize is the length of every benchmark message's JSON body.
const BodySize = 256

// Payload is the message every implementation sends and decodes.
type Payload struct {
	ID  string `json:"id"`
	Seq int    `json:"seq"`
	Pad string `json:"pad"`
}

// NewPayload is message seq, padded so that its JSON is exactly BodySize
// bytes (the id and seq have a fixed width, so the pad length is constant).
func NewPayload(seq int) Payload {
	p := Payload{ID: fmt.Sprintf("m-%010d", seq), Seq: seq}
	base, _ := json.Marshal(p) // a struct of strings and an int always marshals
	p.Pad = strings.Repeat("x", max(BodySize-len(base), 0))
	return p
}

// The preloaded messages of the consumer scenarios are each what the
// implementation's own publisher sends, so that each consumer reads its own
// kind: Watermill's default marshaler refuses a message with a header that is
// not a string, such as AceMQ's x-acemq-attempt.

// rawPublishing is message seq as plain amqp091-go publishes it: JSON,
// persistent, with a message id.
func rawPublishing(seq int) (amqp.Publishing, error) {
	p := NewPayload(seq)
	body, err := json.Marshal(p)
	if err != nil {
		return amqp.Publishing{}, err
	}
	return amqp.Publishing{ContentType: contract.ContentTypeJSON, DeliveryMode: amqp.Persistent, MessageId: p.ID, Body: body}, nil
}

// acemqPublishing is message seq with the AceMQ envelope, as a Publisher
// sends it (attempt 1, first-seen now), its id a new UUID v4 as the
// contract has it (x-acemq-id and the message-id property).
func acemqPublishing(seq int) (amqp.Publishing, error) {
	pub, err := rawPublishing(seq)
	if err != nil {
		return pub, err
	}
	pub.MessageId = uuid.NewString()
	var m transport.Message
	env := acemq.Envelope{ID: pub.MessageId, ContentType: pub.ContentType}.Complete("bench", time.Now())
	if err := env.Write(&m); err != nil {
		return pub, err
	}
	pub.Headers = amqp.Table(m.Headers) // the same map: raw code would build it as amqp.Table
	return pub, nil
}

// watermillUUIDHeader is where Watermill's default marshaler keeps its
// message id.
const watermillUUIDHeader = "_watermill_message_uuid"

// watermillPublishing is message seq as Watermill's default marshaler
// sends it: the id in a header, no content type.
func watermillPublishing(seq int) (amqp.Publishing, error) {
	pub, err := rawPublishing(seq)
	if err != nil {
		return pub, err
	}
	pub.Headers = amqp.Table{watermillUUIDHeader: pub.MessageId}
	pub.ContentType, pub.MessageId = "", ""
	return pub, nil
}

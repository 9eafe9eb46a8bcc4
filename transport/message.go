package transport

import "time"

// Message is what is published and what is delivered: every AMQP basic
// property (but the deprecated cluster-id), the headers and the body.
type Message struct {
	Headers         Table
	ContentType     string
	ContentEncoding string
	MessageID       string
	CorrelationID   string
	ReplyTo         string
	Type            string
	Timestamp       time.Time
	// Persistent is delivery mode 2: the broker writes the message to disk.
	Persistent bool
	// Expiration is the per-message TTL in milliseconds as a string, "" for none.
	Expiration string
	// Priority is 0 to 9 on a queue with x-max-priority, else ignored.
	Priority uint8
	AppID    string
	// UserID, when set, must be the connection's user: RabbitMQ refuses
	// the publish otherwise (PRECONDITION_FAILED).
	UserID string
	Body   []byte
}

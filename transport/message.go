package transport

import "time"

// Message is what is published and what is delivered: the AMQP properties
// acemq reads and writes, the headers and the body.
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
	Body       []byte
}

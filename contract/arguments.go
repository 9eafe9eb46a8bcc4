package contract

// Queue arguments: the RabbitMQ arguments the contract sets or reads
// (sections 2, 5 and 15), and the ones a topology check looks at.
const (
	ArgQueueType            = "x-queue-type"
	ArgMessageTTL           = "x-message-ttl"
	ArgDeadLetterExchange   = "x-dead-letter-exchange"
	ArgDeadLetterRoutingKey = "x-dead-letter-routing-key"
	ArgDeadLetterStrategy   = "x-dead-letter-strategy"
	ArgOverflow             = "x-overflow"
	ArgMaxLength            = "x-max-length"
	ArgMaxLengthBytes       = "x-max-length-bytes"
	ArgDeliveryLimit        = "x-delivery-limit"
	ArgExpires              = "x-expires"
	ArgMaxAge               = "x-max-age"
)

// Queue types, as x-queue-type carries them. A classic queue is declared
// with no x-queue-type at all (section 5).
const (
	QueueTypeClassic = "classic"
	QueueTypeQuorum  = "quorum"
	QueueTypeStream  = "stream"
)

// Values of x-overflow and x-dead-letter-strategy.
const (
	OverflowDropHead         = "drop-head"
	OverflowRejectPublish    = "reject-publish"
	OverflowRejectPublishDLX = "reject-publish-dlx"
	DeadLetterAtMostOnce     = "at-most-once"
	// DeadLetterAtLeastOnce needs OverflowRejectPublish: under drop-head
	// RabbitMQ falls back to at most once.
	DeadLetterAtLeastOnce = "at-least-once"
)

// RungArguments are the queue arguments of source's rung for a wait of
// ttlMillis: exactly the contract's three (section 2: x-message-ttl as an
// AMQP long, dead-lettering to RetryExchange under the source's name); an
// at-least-once rung adds x-dead-letter-strategy at-least-once and
// x-overflow reject-publish, and its x-queue-type is the declaration's.
func RungArguments(source string, ttlMillis int64, k RungKind) map[string]any {
	args := map[string]any{
		ArgMessageTTL:           ttlMillis,
		ArgDeadLetterExchange:   RetryExchange,
		ArgDeadLetterRoutingKey: source,
	}
	if k == AtLeastOnceRungs {
		args[ArgDeadLetterStrategy] = DeadLetterAtLeastOnce
		args[ArgOverflow] = OverflowRejectPublish
	}
	return args
}

package contract

// Outcome is how a delivery ended: the one word Stats, observers, metrics,
// logs and the CLI use for it.
type Outcome string

const (
	// Accepted: the handler accepted it; it was acknowledged.
	Accepted Outcome = "accepted"
	// RetriedInConsumer: held, waited for in the consumer, republished to
	// its queue with the next attempt.
	RetriedInConsumer Outcome = "retried_in_consumer"
	// RetriedOnRung: republished to a rung of the retry ladder.
	RetriedOnRung Outcome = "retried_on_rung"
	// DeadLettered: set aside in Q.dlq.
	DeadLettered Outcome = "dead_lettered"
	// Parked: set aside in Q.parked.
	Parked Outcome = "parked"
	// Requeued: handed back to the broker unsettled, which delivers it
	// again, its attempt unchanged: a nack or reject with requeue (a
	// shutdown, a put-back whose copy failed too) or a failed ack.
	Requeued Outcome = "requeued"
	// PutBack: a copy published to its own queue, its attempt unchanged,
	// confirmed, then the original acknowledged (acemq.Requeue, a failed
	// set-aside): a quorum queue's delivery count starts again.
	PutBack Outcome = "put_back"
)

// PublishOutcome is how a publish ended.
type PublishOutcome string

const (
	PublishConfirmed  PublishOutcome = "confirmed"  // the broker has it
	PublishUnroutable PublishOutcome = "unroutable" // no queue took it; it came back
	PublishRefused    PublishOutcome = "refused"    // the broker refused it (a negative confirm)
	PublishTimedOut   PublishOutcome = "timed_out"  // no answer before the deadline, or blocked until then
	PublishFailed     PublishOutcome = "failed"     // anything else: the body did not encode, no such exchange, the connection was lost
)

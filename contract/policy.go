package contract

import "time"

// The retry policy's contract values (section 3).
const (
	// DefaultBrokerWaitThreshold is the shortest wait that goes to a rung
	// instead of being held in the consumer.
	DefaultBrokerWaitThreshold = 30 * time.Second
	// ExponentialMultiplier and ExponentialJitter are what exponential(n,
	// initial, max) uses.
	ExponentialMultiplier = 2.0
	ExponentialJitter     = 0.2
	// MinConsumerWait is the floor of a jittered wait in the consumer.
	MinConsumerWait = time.Millisecond
	// RequeueDelay is how long the consumer holds a message its handler
	// put back (acemq.Requeue) before the copy goes back on the queue: the
	// Java library's pause before republishing a message another
	// consumer's idempotency claim holds (section 16).
	RequeueDelay = time.Second
)

// DefaultQueueType is the type a topology declares a queue as when it asks
// for none (section 5).
const DefaultQueueType = QueueTypeQuorum

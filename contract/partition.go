package contract

import "strconv"

// Partitions (section 14): the declared topology of Java's OrderedQueue, an
// exchange N (direct) and quorum queues N.p<k> bound to it under p<k>.
const (
	// PartitionQueueInfix stands between the name and the partition in a
	// partition queue's name: orders.p3.
	PartitionQueueInfix = ".p"
	// PartitionRoutingKeyPrefix starts the routing key a partition queue is
	// bound under, followed by the partition: p3.
	PartitionRoutingKeyPrefix = "p"
	// DefaultPartitions is how many partitions a name has when it asks for
	// none, as Java's OrderedQueue.
	DefaultPartitions = 8
	// FNV1aOffset and FNV1aPrime are FNV-1a's 32-bit parameters, the hash
	// of a partition key's UTF-8 bytes.
	FNV1aOffset = 0x811c9dc5
	FNV1aPrime  = 0x01000193
	// ArgSingleActiveConsumer is the queue argument that lets one consumer
	// at a time have a queue's deliveries, the others waiting to take over.
	ArgSingleActiveConsumer = "x-single-active-consumer"
)

// PartitionQueue names partition k of name: "N.p<k>".
func PartitionQueue(name string, k int) string {
	return name + PartitionQueueInfix + strconv.Itoa(k)
}

// PartitionRoutingKey is the routing key partition k is bound under: "p<k>".
func PartitionRoutingKey(k int) string { return PartitionRoutingKeyPrefix + strconv.Itoa(k) }

// PartitionDottedRoutingKey is the routing key of partition k of base as
// the Go peer's, Ruby's and Python's helpers compute it: "<base>.<k>" (a
// dot, which a bare "." constant would forbid everywhere as a literal).
func PartitionDottedRoutingKey(base string, k int) string {
	return base + "." + strconv.Itoa(k)
}

// GroupConsumerTag is the tag of member n (from 0) of the consumer group
// on queue: "acemq-<queue>-<n>".
func GroupConsumerTag(queue string, n int) string {
	return "acemq-" + queue + "-" + strconv.Itoa(n)
}

// Package partition spreads messages over partitions by key, consumes each
// partition in order, and runs groups of consumers on one queue (section 14
// of the family's contract).
//
// A key's partition is FNV-1a 32-bit of its UTF-8 bytes, reduced as the
// unsigned hash modulo the partition count (Of), as the Go, Ruby and Python
// libraries reduce it. Java (floorMod of the signed hash) and .NET (the hash
// with its top bit cleared, modulo n) put every key in the same partition as
// this library exactly when the count is a power of two: for any other
// count, the keys whose hash has its top bit set (about half) may land
// elsewhere.
//
// A Set is Java's OrderedQueue topology: a direct exchange N and quorum
// queues N.p0 ... N.p<n-1>, each bound to N under p<k> (Java's routing key)
// and, by default, under N.<k> too (the key the Go peer's, Ruby's and
// Python's helpers compute), so that a service of any of those libraries
// reaches it. A Publisher sends a keyed message to its partition; Consume takes partitions one message at a
// time, retrying a failure in place (never through the broker, which would
// put it behind the messages after it) and dead-lettering it to N.p<k>.dlq
// when the policy gives up, so that the next message of the partition
// follows. ConsumeGroup is N consumers on one queue, with nothing declared
// and no order kept.
package partition

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

// Hash is FNV-1a 32-bit of key's UTF-8 bytes (offset 0x811c9dc5, prime
// 0x01000193).
func Hash(key string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key)) // a hash.Hash never fails
	return h.Sum32()
}

// Of is key's partition among n: Hash(key) % n, the hash unsigned. A
// count below 1 is an error: it comes from configuration at run time, so
// no Go type could rule it out (an unsigned one still holds 0).
func Of(key string, n int) (int, error) {
	if n < 1 {
		return 0, fmt.Errorf("partition.Of(%q, %d): the partition count must be at least 1", key, n)
	}
	return of(key, n), nil
}

// of is Of for a count known to be at least 1. The remainder is taken in
// 64 bits, so that a count above 2^32 is not truncated.
func of(key string, n int) int { return int(uint64(Hash(key)) % uint64(n)) }

// Set is a name's partitions: exchange Name (direct, durable) and the quorum
// queues Name.p<k>, k from 0 to Partitions-1, each bound to it under the
// routing keys of BindForms (p<k> and Name.<k> by default).
type Set struct {
	Name string
	// Partitions is how many; 0 is contract.DefaultPartitions (8, as Java).
	Partitions int
	// SharedActive declares the partition queues without
	// x-single-active-consumer, as the contract describes Java's
	// OrderedQueue, so that they can be declared by both. Then two
	// consumers of one partition (two instances of a service) take turns
	// and its order is lost; by default the broker lets one at a time
	// have a partition and hands it to another when that one goes.
	SharedActive bool
	// BindForms are the routing-key forms each partition queue is bound
	// under; 0 is BothForms: p<k>, as Java publishes, and N.<k>, as the Go
	// peer, Ruby and Python do. No key of one form is a key of the other
	// (only N.<k> holds a dot), so each names one partition.
	BindForms KeyForm
	// PublishForm is the form a Publisher of the set routes by: JavaForm
	// or DottedForm, one of BindForms. 0 is JavaForm when it is bound (a
	// set a Java service declared binds only that), else DottedForm.
	PublishForm KeyForm
}

// count is the partition count, the default filled in.
func (s Set) count() int {
	if s.Partitions == 0 {
		return contract.DefaultPartitions
	}
	return s.Partitions
}

// Count is how many partitions the set has.
func (s Set) Count() int { return s.count() }

// Validate says what is wrong with the set: no name, a count below 0, or
// routing-key forms that do not fit (see KeyForm).
func (s Set) Validate() error {
	switch {
	case s.Name == "":
		return errors.New("partition: the set has no name")
	case s.Partitions < 0:
		return fmt.Errorf("partition: %s has %d partitions; want at least 1 (0 for %d)", s.Name, s.Partitions, contract.DefaultPartitions)
	}
	return s.validateForms()
}

// Queue names partition k: "N.p<k>".
func (s Set) Queue(k int) string { return contract.PartitionQueue(s.Name, k) }

// Queues names every partition, in order.
func (s Set) Queues() []string {
	qs := make([]string, s.count())
	for k := range qs {
		qs[k] = s.Queue(k)
	}
	return qs
}

// Of is key's partition in the set; an error if its count is below 0.
func (s Set) Of(key string) (int, error) { return Of(key, s.count()) }

// routingKey is key's partition's routing key in the set's PublishForm
// (p<k> by default), in a valid set.
func (s Set) routingKey(key string) string {
	return s.publishForm().key(s.Name, of(key, s.count()))
}

// Topology declares the set: its exchange and its partition queues with
// their bindings. Apply it, or add it to a service's own topology.
func (s Set) Topology() acemq.Topology {
	t := acemq.Topology{Exchanges: []acemq.ExchangeSpec{{Name: s.Name, Type: transport.Direct}}}
	for k := range s.count() {
		q := acemq.QueueSpec{Name: s.Queue(k), Type: transport.Quorum}
		for _, f := range []KeyForm{JavaForm, DottedForm} {
			if s.bindForms()&f != 0 {
				q.Bindings = append(q.Bindings, acemq.BindingSpec{Exchange: s.Name, RoutingKey: f.key(s.Name, k)})
			}
		}
		if !s.SharedActive {
			q.Arguments = transport.Table{contract.ArgSingleActiveConsumer: true}
		}
		t.Queues = append(t.Queues, q)
	}
	return t
}

// Declare validates the set and declares its topology.
func (s Set) Declare(ctx context.Context, c *acemq.Conn) error {
	if err := s.Validate(); err != nil {
		return err
	}
	return s.Topology().Apply(ctx, c)
}

// Assigned are the partitions member (from 0) of members takes when they
// share the set out between them: k with k % members == member, so that 4
// members of 8 partitions take two each.
func (s Set) Assigned(member, members int) ([]int, error) {
	if members < 1 || member < 0 || member >= members {
		return nil, fmt.Errorf("partition: member %d of %d: want 0 <= member < members", member, members)
	}
	var ks []int
	for k := member; k < s.count(); k += members {
		ks = append(ks, k)
	}
	return ks, nil
}

// Publisher publishes keyed messages to their partitions.
type Publisher[T any] struct {
	set Set
	pub *acemq.Publisher[T]
}

// NewPublisher publishes to s's exchange; opts are acemq.NewPublisher's.
func NewPublisher[T any](c *acemq.Conn, s Set, opts ...acemq.PublisherOption) (*Publisher[T], error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	p, err := acemq.NewPublisher[T](c, s.Name, opts...)
	if err != nil {
		return nil, err
	}
	return &Publisher[T]{set: s, pub: p}, nil
}

// Publish sends body to key's partition (routing key p<k>, or N.<k> as the
// set's PublishForm says), confirmed, as
// acemq.Publisher.Publish does. Messages of one key published one after
// another are consumed in that order.
func (p *Publisher[T]) Publish(ctx context.Context, key string, body T, opts ...acemq.MessageOption) error {
	return p.pub.Publish(ctx, p.set.routingKey(key), body, opts...)
}

// Keyed is one message of a batch and its key.
type Keyed[T any] struct {
	Key     string
	Body    T
	Options []acemq.MessageOption
}

// PublishBatch sends msgs to their partitions as acemq.Publisher's
// PublishBatch does (pipelined, every one confirmed, a *acemq.BatchError
// naming those that were not), in order: the messages of one key are
// consumed in the order they have in msgs.
func (p *Publisher[T]) PublishBatch(ctx context.Context, msgs []Keyed[T]) error {
	out := make([]acemq.Outgoing[T], len(msgs))
	for i, m := range msgs {
		out[i] = acemq.Outgoing[T]{RoutingKey: p.set.routingKey(m.Key), Body: m.Body, Options: m.Options}
	}
	return p.pub.PublishBatch(ctx, out)
}

package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/partition"
)

// Ordered is per-key ordering: n messages of orderedKeys keys published
// over orderedPartitions partitions (Java's OrderedQueue topology, as
// package partition declares it) while orderedConsumers consumers each take
// their share of the partitions, one message at a time; every message is
// checked to come after the one before it of its key.
const Ordered = "ordered (8 partitions, 4 consumers)"

const (
	orderedPartitions = 8
	orderedConsumers  = 4
	orderedKeys       = 100
)

// orderedKey is message seq's key: consecutive messages cycle through the
// keys, so every partition gets a share and each key a rising sequence.
func orderedKey(seq int) string { return fmt.Sprintf("k-%d", seq%orderedKeys) }

// orderCheck fails the first message of a key that does not come after the
// key's last one.
type orderCheck struct {
	mu   sync.Mutex
	last map[string]int
	err  error
}

func (o *orderCheck) see(seq int) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	key := orderedKey(seq)
	if last, ok := o.last[key]; ok && seq <= last && o.err == nil {
		o.err = fmt.Errorf("%s: message %d came after %d", key, seq, last)
	}
	o.last[key] = seq
	return o.err
}

// ordered's contenders: raw, raw+envelope (raw's code sending AceMQ's
// headers, when the run has it) and acemq.
func (r *Runner) ordered(n int) []contender {
	cs := []contender{{name: "raw", run: timed(func(ctx context.Context, q string) error { return r.Raw.Ordered(ctx, r.Broker, q, n) })}}
	if r.RawEnvelope != nil {
		cs = append(cs, contender{name: r.RawEnvelope.Name(), run: timed(func(ctx context.Context, q string) error { return r.RawEnvelope.Ordered(ctx, r.Broker, q, n) })})
	}
	return append(cs, contender{name: "acemq", run: timed(func(ctx context.Context, q string) error { return r.AceMQ.Ordered(ctx, r.Broker, q, n) })})
}

// Ordered declares the partition set q with package partition, starts one
// partition.Consume per consumer on its share (Set.Assigned), and publishes
// the n messages with one PublishBatch, each to its key's partition.
func (a *AceMQ) Ordered(ctx context.Context, b *Broker, q string, n int) (err error) {
	set := partition.Set{Name: q, Partitions: orderedPartitions}
	if err := set.Declare(ctx, a.conn); err != nil {
		return err
	}
	defer cleanUpSet(b, set, &err)
	finished := newCountdown(n)
	check := &orderCheck{last: map[string]int{}}
	failed := make(chan error, 1)
	for member := range orderedConsumers {
		ks, err := set.Assigned(member, orderedConsumers)
		if err != nil {
			return err
		}
		cs, err := partition.Consume(ctx, a.conn, set, func(_ context.Context, m acemq.Message[Payload]) acemq.Decision {
			if err := check.see(m.Body.Seq); err != nil {
				select {
				case failed <- err:
				default:
				}
			}
			finished.Tick()
			return acemq.Accept()
		}, partition.Ordering{Partitions: ks}, acemq.WithPrefetch(prefetch))
		if err != nil {
			return err
		}
		defer closing(ctx, &err, "the consumers", func(ctx context.Context) error { _, err := cs.Close(ctx); return err })
	}
	pub, err := partition.NewPublisher[Payload](a.conn, set)
	if err != nil {
		return err
	}
	msgs := make([]partition.Keyed[Payload], n)
	for i := range msgs {
		msgs[i] = partition.Keyed[Payload]{Key: orderedKey(i), Body: NewPayload(i)}
	}
	if err := pub.PublishBatch(ctx, msgs); err != nil {
		return err
	}
	return finished.Wait(ctx, failed)
}

// Ordered is the same in plain amqp091-go: the same exchange and quorum
// queues (single active consumer), orderedConsumers channels each consuming
// its partitions with one goroutine per queue (prefetch 100, an ack per
// message), the messages published pipelined and confirmed to the exchange
// under p<k>, k computed with partition.Of.
func (r *Raw) Ordered(ctx context.Context, b *Broker, q string, n int) (err error) {
	set := partition.Set{Name: q, Partitions: orderedPartitions}
	if err := declareSetRaw(b, set); err != nil {
		return err
	}
	defer cleanUpSet(b, set, &err)
	finished := newCountdown(n)
	check := &orderCheck{last: map[string]int{}}
	failed := make(chan error, 1)
	fail := func(err error) {
		select {
		case failed <- err:
		default:
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	for member := range orderedConsumers {
		ch, err := r.conn.Channel()
		if err != nil {
			return err
		}
		defer ch.Close()
		if err := ch.Qos(prefetch, 0, false); err != nil {
			return err
		}
		ks, _ := set.Assigned(member, orderedConsumers)
		for _, k := range ks {
			dels, err := ch.ConsumeWithContext(ctx, set.Queue(k), "", false, false, false, false, nil)
			if err != nil {
				return err
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for d := range dels {
					var p Payload
					err := json.Unmarshal(d.Body, &p)
					if err == nil {
						err = check.see(p.Seq)
					}
					if err == nil {
						err = d.Ack(false)
					}
					if err != nil {
						fail(err)
						return
					}
					finished.Tick()
				}
			}()
		}
	}
	pubCh, err := r.conn.Channel()
	if err != nil {
		return err
	}
	defer pubCh.Close()
	if err := publishPipelinedTo(ctx, pubCh, q, n, defaultWindow, func(seq int) (string, amqp.Publishing, error) {
		k, err := partition.Of(orderedKey(seq), orderedPartitions)
		if err != nil {
			return "", amqp.Publishing{}, err
		}
		p, err := r.publishing(seq)
		return contract.PartitionRoutingKey(k), p, err
	}); err != nil {
		return err
	}
	return finished.Wait(ctx, failed)
}

// declareSetRaw declares set as partition.Set.Topology does, in amqp091-go.
func declareSetRaw(b *Broker, set partition.Set) error {
	ch, err := b.conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	if err := ch.ExchangeDeclare(set.Name, amqp.ExchangeDirect, true, false, false, false, nil); err != nil {
		return err
	}
	for k, queue := range set.Queues() {
		args := amqp.Table{contract.ArgQueueType: contract.QueueTypeQuorum, contract.ArgSingleActiveConsumer: true}
		if _, err := ch.QueueDeclare(queue, true, false, false, false, args); err != nil {
			return err
		}
		if err := ch.QueueBind(queue, contract.PartitionRoutingKey(k), set.Name, false, nil); err != nil {
			return err
		}
	}
	return nil
}

// cleanUpSet deletes set's exchange and its queues with their companions.
func cleanUpSet(b *Broker, set partition.Set, err *error) {
	var errs []error
	for _, q := range set.Queues() {
		errs = append(errs, b.DeleteScenarioQueues(q))
	}
	ch, cerr := b.conn.Channel()
	if cerr == nil {
		cerr = ch.ExchangeDelete(set.Name, false, false)
		_ = ch.Close()
	}
	errs = append(errs, cerr)
	if e := errors.Join(errs...); e != nil && *err == nil {
		*err = fmt.Errorf("cleaning up %s: %w", set.Name, e)
	}
}

// Command idempotency is the idempotent consumer at work: payments, some
// of them published twice under one message id, through a handler wrapped
// with idempotency.Handler, which charges each payment once.
//
//	go run ./examples/idempotency                    # memory:// and SQLite in a temporary directory
//	go run ./examples/idempotency -broker amqp://guest:guest@localhost:5672/ -db postgres://localhost/shop
//
// Against a real broker and database it uses a queue and a table of its
// own, named for the run, and deletes them at the end.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/examples/internal/example"
	"github.com/acemq-go/acemq/idempotency"
	"github.com/acemq-go/acemq/idempotency/sqlstore"
	"github.com/acemq-go/acemq/idempotency/sqlstore/postgres"
	"github.com/acemq-go/acemq/idempotency/sqlstore/sqlite"
)

// Payment is what the consumer handles: charge Cents to the card.
type Payment struct {
	Cents int `json:"cents"`
}

// published is what the example sends, in order: pay-1 and pay-2 twice,
// as a publisher does when a confirm was lost, and pay-4, whose first
// attempt fails.
var published = []struct {
	id    string
	cents int
}{
	{"pay-1", 1000}, {"pay-2", 2550}, {"pay-1", 1000}, {"pay-3", 725}, {"pay-2", 2550}, {"pay-4", 300},
}

// deliveries is how many the consumer gets: one per publish, and pay-4's
// retry.
var deliveries = len(published) + 1

func main() {
	brokerURL := flag.String("broker", "memory://", "the broker: memory:// (in-process) or an amqp:// URL")
	dbURL := flag.String("db", "", "the idempotency store: a postgres:// URL (default: SQLite in a temporary directory)")
	flag.Parse()
	if err := run(*brokerURL, *dbURL); err != nil {
		fmt.Fprintln(os.Stderr, "idempotency:", err)
		os.Exit(1)
	}
}

func run(brokerURL, dbURL string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	store, closeStore, err := openStore(ctx, dbURL)
	if err != nil {
		return err
	}
	defer closeStore()

	conn, err := example.Connect(ctx, brokerURL)
	if err != nil {
		return err
	}
	defer conn.Close()

	// A queue of this run's own, so that runs on a shared broker never
	// meet; deleted at the end.
	queue := "payments." + example.Suffix()
	policy := acemq.Fixed(3, 10*time.Millisecond)
	topology := acemq.Topology{Queues: []acemq.QueueSpec{{Name: queue, DeadLetter: true, Retry: &policy}}}
	if err := topology.Apply(ctx, conn); err != nil {
		return err
	}
	defer example.DeleteQueues(conn, example.Queues(topology)...)

	payments, err := acemq.NewPublisher[Payment](conn, "") // the default exchange: straight to the queue
	if err != nil {
		return err
	}
	var ids []string
	for _, p := range published {
		if err := payments.Publish(ctx, queue, Payment{Cents: p.cents}, acemq.WithMessageID(p.id)); err != nil {
			return err
		}
		ids = append(ids, p.id)
	}
	fmt.Printf("published %s\n", strings.Join(ids, " "))

	// The charge, which must happen once per payment. Its first try at
	// pay-4 fails: the claim is forgotten, so that the retry charges it.
	handled := make(chan struct{}, deliveries)
	var busy atomic.Bool
	busy.Store(true)
	charge := func(ctx context.Context, m acemq.Message[Payment]) acemq.Decision {
		defer func() { handled <- struct{}{} }()
		if m.Envelope.ID == "pay-4" && busy.CompareAndSwap(true, false) {
			fmt.Printf("%s: the bank is busy: retried, its claim released\n", m.Envelope.ID)
			return acemq.Retry(errors.New("the bank is busy"))
		}
		fmt.Printf("%s: charged %d.%02d (attempt %d)\n", m.Envelope.ID, m.Body.Cents/100, m.Body.Cents%100, m.Envelope.Attempt)
		return acemq.Accept()
	}
	// OnClaim tells of each claim: a Confirmed one is a duplicate the store
	// absorbed, accepted without running the charge.
	duplicates := idempotency.OnClaim(func(key string, r idempotency.Result) {
		if r == idempotency.Confirmed {
			fmt.Printf("%s: a duplicate, accepted without charging\n", key)
			handled <- struct{}{}
		}
	})
	handler, err := idempotency.Handler(store, charge, duplicates)
	if err != nil {
		return err
	}
	consumer, err := acemq.Consume(ctx, conn, queue, handler, acemq.WithPolicy(policy))
	if err != nil {
		return err
	}
	for range deliveries {
		select {
		case <-handled:
		case <-ctx.Done():
			_, _ = consumer.Close(context.Background())
			return fmt.Errorf("waiting for the deliveries: %w", ctx.Err())
		}
	}
	if _, err := consumer.Close(ctx); err != nil {
		return err
	}
	s := consumer.Stats()
	fmt.Printf("consumer: %d accepted, %d retried, %d dead-lettered\n", s.Accepted, s.RetriedInConsumer, s.DeadLettered)

	rows, err := remembered(ctx, store)
	if err != nil {
		return err
	}
	fmt.Printf("the store remembers: %s\n", strings.Join(rows, ", "))
	return nil
}

// openStore opens the idempotency store: PostgreSQL at dbURL in a table of
// this run's own, dropped on close, or else SQLite in a temporary
// directory, removed on close.
func openStore(ctx context.Context, dbURL string) (*sqlstore.Store, func(), error) {
	if dbURL != "" {
		store, err := postgres.Open(ctx, dbURL, sqlstore.WithTable("acemq_idempotency_example_"+example.Suffix()))
		if err != nil {
			return nil, nil, err
		}
		if err := store.Migrate(ctx); err != nil {
			store.Close()
			return nil, nil, err
		}
		return store, func() {
			if _, err := store.DB().Exec("DROP TABLE " + store.Table()); err != nil {
				fmt.Fprintln(os.Stderr, "idempotency: dropping the example's table:", err)
			}
			store.Close()
		}, nil
	}
	dir, err := os.MkdirTemp("", "acemq-idempotency-example-")
	if err != nil {
		return nil, nil, err
	}
	store, err := sqlite.Open(ctx, filepath.Join(dir, "idempotency.db"))
	if err == nil {
		err = store.Migrate(ctx)
		if err != nil {
			store.Close()
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return store, func() { store.Close(); os.RemoveAll(dir) }, nil
}

// remembered lists the store's rows, key and state, in key order.
func remembered(ctx context.Context, store *sqlstore.Store) ([]string, error) {
	rows, err := store.DB().QueryContext(ctx, "SELECT message_id, state FROM "+store.Table()+" ORDER BY message_id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, state string
		if err := rows.Scan(&id, &state); err != nil {
			return nil, err
		}
		out = append(out, id+" "+state)
	}
	return out, rows.Err()
}

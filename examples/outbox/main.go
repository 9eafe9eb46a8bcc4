// The transactional outbox: each order and the message announcing it are
// written in one database transaction, and a relay publishes the messages
// with confirms once the transactions have committed.
//
//	go run ./examples/outbox                      # memory:// and SQLite in a temporary directory
//	go run ./examples/outbox -broker amqp://guest:guest@localhost:5672/ -db postgres://...
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/examples/internal/example"
	"github.com/acemq-go/acemq/outbox"
	"github.com/acemq-go/acemq/outbox/sqlstore"
	"github.com/acemq-go/acemq/outbox/sqlstore/postgres"
	"github.com/acemq-go/acemq/outbox/sqlstore/sqlite"
)

type Order struct {
	ID    string `json:"id"`
	Cents int    `json:"cents"`
}

func main() {
	broker := flag.String("broker", "memory://", "the broker: memory:// or an amqp:// URL")
	dbURL := flag.String("db", "", "a postgres:// URL (default: SQLite in a temporary directory)")
	flag.Parse()
	if err := run(context.Background(), *broker, *dbURL); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, brokerURL, dbURL string) error {
	// Names of this run's own, so that runs against shared servers do not
	// meet; they are never printed, so the output stays the same.
	suffix := example.Suffix()
	queue := "outbox-example." + suffix

	conn, err := example.Connect(ctx, brokerURL)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := (acemq.Topology{Queues: []acemq.QueueSpec{{Name: queue, Exclusive: true}}}).Apply(ctx, conn); err != nil {
		return err
	}

	store, orders, cleanup, err := open(ctx, dbURL, suffix)
	if err != nil {
		return err
	}
	defer cleanup()
	db := store.DB()
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+orders+" (id VARCHAR(32) PRIMARY KEY, cents INTEGER NOT NULL)"); err != nil {
		return err
	}

	// The order and its message: one transaction, both or neither.
	placeOrder := func(o Order, commit bool) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, "INSERT INTO "+orders+" (id, cents) VALUES ("+param(store, 1)+", "+param(store, 2)+")", o.ID, o.Cents); err != nil {
			return err
		}
		if _, err := store.Write(ctx, tx, outbox.Message{Exchange: "", RoutingKey: queue, Body: o,
			Options: []acemq.MessageOption{acemq.WithMessageID("order-" + o.ID), acemq.WithMessageType("order.created")}}); err != nil {
			return err
		}
		if !commit {
			fmt.Printf("order %s rolled back: neither the order nor its message is kept\n", o.ID)
			return tx.Rollback()
		}
		fmt.Printf("order %s and its message written in one transaction\n", o.ID)
		return tx.Commit()
	}
	for _, o := range []struct {
		order  Order
		commit bool
	}{{Order{"o-1", 1250}, true}, {Order{"o-2", 990}, true}, {Order{"o-3", 4000}, false}} {
		if err := placeOrder(o.order, o.commit); err != nil {
			return err
		}
	}

	var kept int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+orders).Scan(&kept); err != nil {
		return err
	}
	fmt.Printf("orders in the table: %d\n", kept)

	relay, err := outbox.NewRelay(store, conn)
	if err != nil {
		return err
	}
	if err := printLag(ctx, relay); err != nil {
		return err
	}
	b, err := relay.Once(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("relay: claimed %d, published %d, failed %d\n", b.Claimed, b.Published, b.Failed)
	if err := printLag(ctx, relay); err != nil {
		return err
	}
	for {
		d, ok, err := conn.Get(ctx, queue)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		env := acemq.ReadEnvelope(d.Message)
		fmt.Printf("received %s %s id=%s attempt=%d\n", env.Type, d.Body, env.ID, env.Attempt)
		if err := d.Ack(); err != nil {
			return err
		}
	}

	// A message for an exchange that does not exist: the broker says no,
	// the failure is counted and kept, and the record stays in the table.
	const missing = "no-such-exchange"
	if _, err := store.Write(ctx, db, outbox.Message{Exchange: missing, RoutingKey: "k", Body: "lost?"}); err != nil {
		return err
	}
	if b, err = relay.Once(ctx); err != nil {
		return err
	}
	var attempts int
	var lastError string
	if err := db.QueryRowContext(ctx, "SELECT attempts, last_error FROM "+store.Table()+" WHERE exchange_name = "+param(store, 1), missing).
		Scan(&attempts, &lastError); err != nil {
		return err
	}
	fmt.Printf("a message to %s: claimed %d, failed %d; attempts %d, last_error names the exchange: %t\n",
		missing, b.Claimed, b.Failed, attempts, strings.Contains(lastError, missing))
	if err := printLag(ctx, relay); err != nil {
		return err
	}
	pruned, err := relay.Prune(ctx, 0)
	if err != nil {
		return err
	}
	fmt.Printf("pruned %d published records\n", pruned)
	return nil
}

func printLag(ctx context.Context, r *outbox.Relay) error {
	lag, err := r.Lag(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("lag: %d pending, %d given up\n", lag.Pending, lag.GivenUp)
	return nil
}

// open opens the outbox and names the orders table: SQLite in a temporary
// directory removed at the end, or PostgreSQL in tables of this run's own,
// dropped at the end.
func open(ctx context.Context, dbURL, suffix string) (*sqlstore.Store, string, func(), error) {
	if dbURL == "" {
		dir, err := os.MkdirTemp("", "acemq-outbox-example-")
		if err != nil {
			return nil, "", nil, err
		}
		store, err := sqlite.Open(ctx, filepath.Join(dir, "shop.db"))
		if err != nil {
			os.RemoveAll(dir)
			return nil, "", nil, err
		}
		return store, "orders", func() { store.Close(); os.RemoveAll(dir) }, nil
	}
	table, orders := "acemq_outbox_example_"+suffix, "example_orders_"+suffix
	store, err := postgres.Open(ctx, dbURL, sqlstore.WithTable(table))
	if err != nil {
		return nil, "", nil, err
	}
	return store, orders, func() {
		drop(store.DB(), table, orders)
		store.Close()
	}, nil
}

func drop(db *sql.DB, tables ...string) {
	for _, t := range tables {
		if _, err := db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+t); err != nil {
			log.Printf("dropping %s: %v", t, err)
		}
	}
}

// param is the nth placeholder of the store's database.
func param(s *sqlstore.Store, n int) string {
	if s.Dialect().String() == sqlstore.PostgreSQL.String() {
		return fmt.Sprintf("$%d", n)
	}
	return "?"
}

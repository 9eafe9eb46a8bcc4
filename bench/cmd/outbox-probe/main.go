// Command outbox-probe times the phases of a batch (claim, publish and
// confirm, mark) of outbox.Relay and of the raw+lease loop on PostgreSQL.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/outbox"
	"github.com/acemq-go/acemq/outbox/sqlstore"
	"github.com/acemq-go/acemq/outbox/sqlstore/postgres"
)

type timed struct {
	outbox.Store
	claim, mark time.Duration
}

func (t *timed) Claim(ctx context.Context, c outbox.Claim) ([]outbox.Record, error) {
	s := time.Now()
	r, err := t.Store.Claim(ctx, c)
	t.claim += time.Since(s)
	return r, err
}

func (t *timed) Published(ctx context.Context, ids []int64) error {
	s := time.Now()
	err := t.Store.Published(ctx, ids)
	t.mark += time.Since(s)
	return err
}

var (
	url     = flag.String("url", os.Getenv("ACEMQ_TEST_URL"), "")
	pgURL   = flag.String("postgres", os.Getenv("ACEMQ_TEST_POSTGRES_URL"), "")
	records = flag.Int("records", 5000, "")
	runs    = flag.Int("runs", 3, "")
	only    = flag.String("only", "relay,raw+lease", "")
)

func main() {
	flag.Parse()
	ctx := context.Background()
	for run := 1; run <= *runs; run++ {
		for _, impl := range strings.Split(*only, ",") {
			table := fmt.Sprintf("probe_%d_%s", run, strings.ReplaceAll(impl, "+", "_"))
			store, err := postgres.Open(ctx, *pgURL, sqlstore.WithTable(table))
			must(err)
			conn, err := amqp.Dial(*url)
			must(err)
			ch, err := conn.Channel()
			must(err)
			_, err = ch.QueueDeclare(table, false, false, false, false, nil)
			must(err)
			tx, _ := store.DB().BeginTx(ctx, nil)
			for i := range *records {
				_, err := store.Write(ctx, tx, outbox.Message{RoutingKey: table, Body: []byte(strconv.Itoa(i) + strings.Repeat("x", 100))})
				must(err)
			}
			must(tx.Commit())
			start := time.Now()
			var line string
			if impl == "relay" {
				line = relay(ctx, store)
			} else {
				line = rawLease(ctx, store.DB(), ch, table)
			}
			fmt.Printf("run %d %-9s total %4.0f ms %s\n", run, impl, ms(time.Since(start)), line)
			_, _ = ch.QueueDelete(table, false, false, false)
			conn.Close()
			_, _ = store.DB().Exec("DROP TABLE " + table)
			store.Close()
		}
	}
}

func relay(ctx context.Context, store *sqlstore.Store) string {
	conn, err := acemq.Connect(ctx, *url)
	must(err)
	defer conn.Close()
	t := &timed{Store: store}
	r, err := outbox.NewRelay(t, conn)
	must(err)
	start := time.Now()
	n := 0
	for {
		b, err := r.Once(ctx)
		must(err)
		if b.Claimed == 0 {
			break
		}
		n += b.Published
	}
	all := time.Since(start)
	return fmt.Sprintf("claim %4.0f publish+confirm %4.0f mark %4.0f (%d)", ms(t.claim), ms(all-t.claim-t.mark), ms(t.mark), n)
}

func rawLease(ctx context.Context, db *sql.DB, ch *amqp.Channel, table string) string {
	must(ch.Confirm(false))
	p := func(n int) string { return "$" + strconv.Itoa(n) }
	query := "UPDATE " + table + " SET locked_by = " + p(1) + ", locked_until = " + p(2) +
		" WHERE id IN (SELECT id FROM " + table + " WHERE published_at IS NULL AND (locked_until IS NULL OR locked_until <= " + p(3) + ")" +
		" ORDER BY id LIMIT " + p(4) + " FOR UPDATE SKIP LOCKED) RETURNING id, routing_key, body, content_type, headers"
	mark := "UPDATE " + table + " SET published_at = " + p(1) + ", locked_by = NULL, locked_until = NULL"
	var claimT, pubT, confT, markT time.Duration
	n := 0
	for {
		s := time.Now()
		at := time.Now().UTC()
		rows, err := db.QueryContext(ctx, query, "raw", at.Add(time.Minute), at, 100)
		must(err)
		claimT += time.Since(s) // until the first row is in
		var ids []any
		var confirms []*amqp.DeferredConfirmation
		s = time.Now()
		for rows.Next() {
			var id int64
			var key, body string
			var ctype sql.NullString
			var headers string
			must(rows.Scan(&id, &key, &body, &ctype, &headers))
			var h amqp.Table
			must(json.Unmarshal([]byte(headers), &h))
			c, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", key, true, false, amqp.Publishing{
				Headers: h, ContentType: ctype.String, Body: []byte(body), DeliveryMode: amqp.Persistent})
			must(err)
			ids = append(ids, id)
			confirms = append(confirms, c)
		}
		rows.Close()
		pubT += time.Since(s)
		if len(ids) == 0 {
			break
		}
		s = time.Now()
		for _, c := range confirms {
			ok, err := c.WaitContext(ctx)
			if err != nil || !ok {
				panic("not confirmed")
			}
		}
		confT += time.Since(s)
		s = time.Now()
		marks := make([]string, len(ids))
		for i := range ids {
			marks[i] = p(i + 2)
		}
		_, err = db.ExecContext(ctx, mark+" WHERE id IN ("+strings.Join(marks, ", ")+")", append([]any{time.Now().UTC()}, ids...)...)
		must(err)
		markT += time.Since(s)
		n += len(ids)
	}
	return fmt.Sprintf("claim(first row) %4.0f read+publish %4.0f confirm %4.0f mark %4.0f (%d)", ms(claimT), ms(pubT), ms(confT), ms(markT), n)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// Command proc is the outbox chaos harness's separate processes: a writer
// that writes numbered records to the outbox, one transaction each, and a
// relay that publishes them (and is SIGKILLed by the harness), logging each
// claim it makes and each mark it gets done to a file, unbuffered, so that
// the harness can tell which claims may have left a record published twice.
//
//	proc write -db DSN -table T -queue Q -from 0 -n N -rate R
//	proc relay -db DSN -table T -broker URL -name NAME -batch B -lease D -log FILE
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/acemq-go/acemq"
	outboxchaos "github.com/acemq-go/acemq/internal/testing/chaos/outbox"
	"github.com/acemq-go/acemq/outbox"
	"github.com/acemq-go/acemq/outbox/sqlstore"
	"github.com/acemq-go/acemq/outbox/sqlstore/postgres"
	"github.com/acemq-go/acemq/outbox/sqlstore/sqlite"
)

func main() {
	if len(os.Args) < 2 {
		fail(fmt.Errorf("usage: proc write|relay [flags]"))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "write":
		err = write(ctx, os.Args[2:])
	case "relay":
		err = relay(ctx, os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "proc:", err)
	os.Exit(1)
}

func open(ctx context.Context, dsn, table string) (*sqlstore.Store, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return postgres.Open(ctx, dsn, sqlstore.WithTable(table))
	}
	return sqlite.Open(ctx, dsn, sqlstore.WithTable(table))
}

func write(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("write", flag.ExitOnError)
	dsn := fs.String("db", "", "SQLite file or postgres:// URL")
	table := fs.String("table", "", "the outbox table")
	queue := fs.String("queue", "", "the queue the records are for")
	from := fs.Int("from", 0, "the first number")
	n := fs.Int("n", 0, "how many records")
	rate := fs.Int("rate", 0, "records a second at most (0: as fast as it can)")
	_ = fs.Parse(args)
	var every time.Duration
	if *rate > 0 {
		every = time.Second / time.Duration(*rate)
	}
	start := time.Now()
	s, err := open(ctx, *dsn, *table)
	if err != nil {
		return err
	}
	defer s.Close()
	for i := *from; i < *from+*n; i++ {
		tx, err := s.DB().BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := s.Write(ctx, tx, outbox.Message{RoutingKey: *queue, Body: fmt.Sprint(i),
			Options: []acemq.MessageOption{acemq.WithMessageID(outboxchaos.MessageID(i))}}); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		// The load is spread over the time the faults take.
		if wait := time.Until(start.Add(time.Duration(i-*from+1) * every)); wait > 0 {
			time.Sleep(wait)
		}
	}
	return nil
}

// logged is the relay's store, logging to a file, one write(2) a line:
//
//	claimed UNIXNANO N...      before the claim of records N... (the lease
//	                           runs from after this time)
//	published UNIXNANO N...    after records N... were marked published
//
// A claim whose records are not all marked published within its lease (the
// relay was killed, a publish or the mark failed, or the mark came late) is
// the one way a record can be published twice.
type logged struct {
	outbox.Store
	mu     sync.Mutex
	f      *os.File
	number map[int64]string // record id -> the N of its message id
}

func (l *logged) line(kind string, at time.Time, ns []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = fmt.Fprintf(l.f, "%s %d %s\n", kind, at.UnixNano(), strings.Join(ns, " "))
}

func (l *logged) Claim(ctx context.Context, c outbox.Claim) ([]outbox.Record, error) {
	before := time.Now()
	recs, err := l.Store.Claim(ctx, c)
	if len(recs) == 0 {
		return recs, err
	}
	ns := make([]string, len(recs))
	l.mu.Lock()
	for i, rec := range recs {
		ns[i] = strings.TrimPrefix(acemq.ReadEnvelope(rec.Message).ID, outboxchaos.MessageIDPrefix)
		l.number[rec.ID] = ns[i]
	}
	l.mu.Unlock()
	l.line("claimed", before, ns)
	return recs, err
}

func (l *logged) Published(ctx context.Context, ids []int64) error {
	if err := l.Store.Published(ctx, ids); err != nil {
		return err
	}
	ns := make([]string, len(ids))
	l.mu.Lock()
	for i, id := range ids {
		ns[i] = l.number[id]
	}
	l.mu.Unlock()
	l.line("published", time.Now(), ns)
	return nil
}

func relay(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("relay", flag.ExitOnError)
	dsn := fs.String("db", "", "SQLite file or postgres:// URL")
	table := fs.String("table", "", "the outbox table")
	broker := fs.String("broker", "", "amqp:// URL")
	name := fs.String("name", "", "the relay's name")
	batch := fs.Int("batch", outbox.DefaultBatchSize, "records per claim")
	lease := fs.Duration("lease", outbox.DefaultLease, "the lease")
	logPath := fs.String("log", "", "the publish log")
	_ = fs.Parse(args)
	fmt.Println(outboxchaos.Ready) // main handles SIGTERM from here on
	err := runRelay(ctx, *dsn, *table, *broker, *name, *batch, *lease, *logPath)
	if err != nil && ctx.Err() != nil {
		// Stopped while it started (opening the store, connecting): the
		// harness ends a run as soon as all is relayed, on a slow machine
		// before a replacement is up.
		return nil
	}
	return err
}

func runRelay(ctx context.Context, dsn, table, broker, name string, batch int, lease time.Duration, logPath string) error {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	s, err := open(ctx, dsn, table)
	if err != nil {
		return err
	}
	defer s.Close()
	conn, err := acemq.Connect(ctx, broker, acemq.WithConnectionName(name))
	if err != nil {
		return err
	}
	defer conn.Close()
	r, err := outbox.NewRelay(&logged{Store: s, f: f, number: map[int64]string{}}, conn, outbox.WithName(name), outbox.WithBatchSize(batch), outbox.WithLease(lease),
		outbox.WithPollInterval(20*time.Millisecond), outbox.WithRetryDelay(100*time.Millisecond))
	if err != nil {
		return err
	}
	return r.Run(ctx)
}

// Command proc is the outbox chaos harness's separate processes: a writer
// that writes numbered records to the outbox, one transaction each, and a
// relay that publishes them (and is SIGKILLed by the harness), logging each
// publish it sends and each confirm it gets to a file, unbuffered, so that
// the harness can tell which process published a duplicate.
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

// MessageID is the id of record n's message.
func MessageID(n int) string { return fmt.Sprintf("outbox-chaos-%d", n) }

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
			Options: []acemq.MessageOption{acemq.WithMessageID(MessageID(i))}}); err != nil {
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

// logger writes "sent ID" and "confirmed ID" lines, each one write(2).
type logger struct {
	acemq.NopObserver
	mu sync.Mutex
	f  *os.File
}

func (l *logger) line(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.f.WriteString(s + "\n")
}

func (l *logger) PublishStart(ctx context.Context, p *acemq.PublishInfo) context.Context {
	l.line("sent " + p.MessageID)
	return ctx
}

func (l *logger) PublishEnd(_ context.Context, p *acemq.PublishInfo, r acemq.PublishResult) {
	if r.Err == nil {
		l.line("confirmed " + p.MessageID)
	}
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
	f, err := os.OpenFile(*logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	s, err := open(ctx, *dsn, *table)
	if err != nil {
		return err
	}
	defer s.Close()
	conn, err := acemq.Connect(ctx, *broker, acemq.WithObserver(&logger{f: f}), acemq.WithConnectionName(*name))
	if err != nil {
		return err
	}
	defer conn.Close()
	r, err := outbox.NewRelay(s, conn, outbox.WithName(*name), outbox.WithBatchSize(*batch), outbox.WithLease(*lease),
		outbox.WithPollInterval(20*time.Millisecond), outbox.WithRetryDelay(100*time.Millisecond))
	if err != nil {
		return err
	}
	return r.Run(ctx)
}

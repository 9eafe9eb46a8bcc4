// Command idemprobe says where an idempotent consumer's message spends its
// wall time on a SQL store: statements (flights) per message, writes per
// statement, how long a statement takes, and how long a handler waits in
// Claim and in Confirm. It consumes a preloaded queue with
// idempotency.Handler (concurrency 8, prefetch 100, as the harness's
// `consume-ack, idempotent (concurrency 8)` does), the plain consumer
// alternated with it; with -db-only it calls the store from goroutines
// without a broker. Figures, not a benchmark: notes/issue30-idempotent.md.
//
//	go run ./cmd/idemprobe -url "$ACEMQ_TEST_URL" -postgres "$ACEMQ_TEST_POSTGRES_URL" -store postgres
package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/bench/internal/harness"
	"github.com/acemq-go/acemq/idempotency"
	"github.com/acemq-go/acemq/idempotency/sqlstore"
	"github.com/acemq-go/acemq/idempotency/sqlstore/sqlite"
)

func main() {
	url := flag.String("url", os.Getenv("ACEMQ_TEST_URL"), "AMQP URL")
	pg := flag.String("postgres", os.Getenv("ACEMQ_TEST_POSTGRES_URL"), "PostgreSQL URL")
	store := flag.String("store", "postgres", "postgres or sqlite")
	n := flag.Int("n", 5000, "messages per run")
	rounds := flag.Int("rounds", 3, "rounds (plain, idempotent alternated)")
	concurrency := flag.Int("concurrency", 8, "handlers")
	dbOnly := flag.Bool("db-only", false, "claim and confirm from goroutines, no broker")
	flag.Parse()
	ctx := context.Background()
	for round := range *rounds {
		if *dbOnly {
			report(round, "db-only", must(runDBOnly(ctx, *store, *pg, *n, *concurrency)))
			continue
		}
		report(round, "plain", must(runConsume(ctx, *url, "", *pg, *n, *concurrency)))
		report(round, *store, must(runConsume(ctx, *url, *store, *pg, *n, *concurrency)))
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}

// figures is one run's.
type figures struct {
	n          int
	wall       time.Duration
	statements int64
	stmtTime   time.Duration
	ops        [2]int64 // claims, confirms
	waited     [2]time.Duration
	cpu        time.Duration
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func report(round int, what string, f figures) {
	rate := float64(f.n) / f.wall.Seconds()
	line := fmt.Sprintf("round %d %-8s %6.0f msgs/s  cpu %6.1f us/msg", round, what, rate, float64(f.cpu.Microseconds())/float64(f.n))
	if f.statements > 0 {
		ops := f.ops[0] + f.ops[1]
		line += fmt.Sprintf("  statements/msg %.2f  writes/statement %.2f  statement %.0f us (busy %.0f%% of wall)  claim wait %.0f us  confirm wait %.0f us  wall/msg/handler %.0f us",
			float64(f.statements)/float64(f.n), float64(ops)/float64(f.statements),
			float64(f.stmtTime.Microseconds())/float64(f.statements), 100*f.stmtTime.Seconds()/f.wall.Seconds(),
			float64(f.waited[0].Microseconds())/float64(max(f.ops[0], 1)), float64(f.waited[1].Microseconds())/float64(max(f.ops[1], 1)),
			float64(f.wall.Microseconds())*8/float64(f.n))
	}
	fmt.Println(line)
}

// counted is a store whose claims and confirms are counted and timed.
type counted struct {
	idempotency.Store
	ops    [2]atomic.Int64
	waited [2]atomic.Int64 // ns
}

func (c *counted) Claim(ctx context.Context, key, owner string, timeout time.Duration) (idempotency.Result, error) {
	began := time.Now()
	defer c.add(0, began)
	return c.Store.Claim(ctx, key, owner, timeout)
}

func (c *counted) Confirm(ctx context.Context, key string, retention time.Duration) error {
	began := time.Now()
	defer c.add(1, began)
	return c.Store.Confirm(ctx, key, retention)
}

func (c *counted) add(i int, began time.Time) {
	c.ops[i].Add(1)
	c.waited[i].Add(int64(time.Since(began)))
}

// openStore opens a fresh store whose statements s counts.
func openStore(ctx context.Context, kind, pg string, s *stmts) (*sqlstore.Store, func(), error) {
	var db *sql.DB
	var d sqlstore.Dialect
	var cleanup func()
	table := "idemprobe_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	switch kind {
	case "postgres":
		cfg, err := pgx.ParseConfig(pg)
		if err != nil {
			return nil, nil, err
		}
		db, d = sql.OpenDB(countingConnector{stdlib.GetConnector(*cfg), s}), sqlstore.PostgreSQL
		cleanup = func() { db.ExecContext(ctx, "DROP TABLE "+table); db.Close() }
	default:
		dir, err := os.MkdirTemp("", "idemprobe-")
		if err != nil {
			return nil, nil, err
		}
		path := filepath.Join(dir, "idempotency.db")
		plain, err := sqlite.OpenDB(path)
		if err != nil {
			return nil, nil, err
		}
		drv := plain.Driver()
		plain.Close()
		db, d = sql.OpenDB(dsnConnector{drv, path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)", s}), sqlstore.SQLite
		cleanup = func() { db.Close(); os.RemoveAll(dir) }
	}
	st, err := sqlstore.New(db, d, sqlstore.WithTable(table))
	if err == nil {
		err = st.Migrate(ctx)
	}
	s.reset()
	return st, cleanup, err
}

func runConsume(ctx context.Context, url, kind, pg string, n, concurrency int) (figures, error) {
	b, err := harness.Dial(url)
	if err != nil {
		return figures{}, err
	}
	defer b.Close()
	conn, err := acemq.Connect(ctx, url)
	if err != nil {
		return figures{}, err
	}
	defer conn.Close()
	queue := "idemprobe-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if err := b.DeclareQueue(queue, nil); err != nil {
		return figures{}, err
	}
	defer b.DeleteScenarioQueues(queue)
	a := &harness.AceMQ{}
	if err := b.Preload(ctx, queue, n, a.Preloaded); err != nil {
		return figures{}, err
	}
	var done sync.WaitGroup
	done.Add(n)
	h := func(context.Context, acemq.Message[harness.Payload]) acemq.Decision {
		done.Done()
		return acemq.Accept()
	}
	var s stmts
	var c *counted
	if kind != "" {
		st, cleanup, err := openStore(ctx, kind, pg, &s)
		if err != nil {
			return figures{}, err
		}
		defer cleanup()
		c = &counted{Store: st}
		if h, err = idempotency.Handler(idempotency.Store(c), h); err != nil {
			return figures{}, err
		}
	}
	cpu0 := cpuTime()
	began := time.Now()
	cons, err := acemq.Consume(ctx, conn, queue, h, acemq.WithPrefetch(100), acemq.WithConcurrency(concurrency))
	if err != nil {
		return figures{}, err
	}
	done.Wait()
	wall := time.Since(began)
	cons.Close(ctx)
	f := figures{n: n, wall: wall, cpu: cpuTime() - cpu0}
	if c != nil {
		f.fill(&s, c)
	}
	return f, nil
}

func runDBOnly(ctx context.Context, kind, pg string, n, concurrency int) (figures, error) {
	var s stmts
	st, cleanup, err := openStore(ctx, kind, pg, &s)
	if err != nil {
		return figures{}, err
	}
	defer cleanup()
	c := &counted{Store: st}
	var next atomic.Int64
	var wg sync.WaitGroup
	cpu0 := cpuTime()
	began := time.Now()
	errs := make(chan error, concurrency)
	for range concurrency {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				key := "m-" + strconv.FormatInt(i, 10)
				if _, err := c.Claim(ctx, key, "probe", time.Minute); err != nil {
					errs <- err
					return
				}
				if err := c.Confirm(ctx, key, time.Hour); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	f := figures{n: n, wall: time.Since(began), cpu: cpuTime() - cpu0}
	f.fill(&s, c)
	select {
	case err := <-errs:
		return f, err
	default:
	}
	return f, nil
}

func (f *figures) fill(s *stmts, c *counted) {
	f.statements, f.stmtTime = s.n.Load(), time.Duration(s.ns.Load())
	for i := range 2 {
		f.ops[i], f.waited[i] = c.ops[i].Load(), time.Duration(c.waited[i].Load())
	}
}

// stmts counts and times the statements of a database.
type stmts struct{ n, ns atomic.Int64 }

func (s *stmts) reset() { s.n.Store(0); s.ns.Store(0) }

func (s *stmts) time(began time.Time) { s.n.Add(1); s.ns.Add(int64(time.Since(began))) }

type countingConnector struct {
	driver.Connector
	s *stmts
}

func (c countingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return countingConn{conn, c.s}, nil
}

type dsnConnector struct {
	drv driver.Driver
	dsn string
	s   *stmts
}

func (c dsnConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return countingConn{conn, c.s}, nil
}

func (c dsnConnector) Driver() driver.Driver { return c.drv }

// countingConn times each statement to its last row: a query's rows are
// read before the next statement, so the time runs from the call to the
// rows' close.
type countingConn struct {
	driver.Conn
	s *stmts
}

func (c countingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	defer c.s.time(time.Now())
	return c.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
}

func (c countingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	began := time.Now()
	rows, err := c.Conn.(driver.QueryerContext).QueryContext(ctx, query, args)
	if err != nil {
		c.s.time(began)
		return nil, err
	}
	return countedRows{rows, c.s, began}, nil
}

func (c countingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (c countingConn) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := c.Conn.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

type countedRows struct {
	driver.Rows
	s     *stmts
	began time.Time
}

func (r countedRows) Close() error {
	defer r.s.time(r.began)
	return r.Rows.Close()
}

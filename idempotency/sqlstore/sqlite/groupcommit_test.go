package sqlite_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acemq-go/acemq/idempotency"
	"github.com/acemq-go/acemq/idempotency/sqlstore"
	"github.com/acemq-go/acemq/idempotency/sqlstore/sqlite"
)

// Concurrent claims (and confirms) made while a write is in flight reach
// the database together, as one statement, once it returns: the group
// commit. The gate holds every statement until the test opens it; in a
// synctest bubble, synctest.Wait returns once each caller is blocked (at
// the gate, or waiting in the store), so the count does not depend on
// timing.
func TestConcurrentWritesAreGrouped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &gate{}
		s := gatedStore(t, g)
		const callers = 8
		ctx := t.Context()
		step := func(what string, want int, call func(i int) error) {
			t.Helper()
			g.close()
			errs := make([]error, callers)
			var wg sync.WaitGroup
			wg.Go(func() { errs[0] = call(0) })
			synctest.Wait() // the first is at the gate: its write is in flight
			for i := 1; i < callers; i++ {
				wg.Go(func() { errs[i] = call(i) })
			}
			synctest.Wait()
			g.open()
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("%s %d: %v", what, i, err)
				}
			}
			// The first alone; the seven that came while it was in flight together.
			if n := g.take(); n != want {
				t.Errorf("%d concurrent %ss took %d statements; want %d", callers, what, n, want)
			}
		}
		step("claim", 2, func(i int) error {
			r, err := s.Claim(ctx, fmt.Sprintf("m-%d", i), "me", 5*time.Minute)
			if err == nil && r != idempotency.Claimed {
				err = fmt.Errorf("claim = %v; want claimed", r)
			}
			return err
		})
		step("confirm", 2, func(i int) error { return s.Confirm(ctx, fmt.Sprintf("m-%d", i), time.Hour) })
		// Each claim that found a row reads it: one read per group.
		step("duplicate claim", 4, func(i int) error {
			r, err := s.Claim(ctx, fmt.Sprintf("m-%d", i), "other", 5*time.Minute)
			if err == nil && r != idempotency.Confirmed {
				err = fmt.Errorf("claim of a confirmed key = %v; want confirmed", r)
			}
			return err
		})
	})
}

// gatedStore is a store on a SQLite file whose statements pass g.
func gatedStore(t *testing.T, g *gate) *sqlstore.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "idempotency.db")
	plain, err := sqlite.OpenDB(path)
	if err != nil {
		t.Fatal(err)
	}
	drv := plain.Driver()
	plain.Close()
	db := sql.OpenDB(gatedConnector{drv: drv, dsn: path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)", g: g})
	t.Cleanup(func() { db.Close() })
	s, err := sqlstore.New(db, sqlstore.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	g.take() // the migration's
	return s
}

// gate counts the statements, and holds them while it is closed.
type gate struct {
	mu     sync.Mutex
	shut   chan struct{} // nil when open
	passed int
}

func (g *gate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.shut = make(chan struct{})
}

func (g *gate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.shut)
	g.shut = nil
}

// take returns the statements passed since the last take.
func (g *gate) take() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := g.passed
	g.passed = 0
	return n
}

func (g *gate) pass(query string) {
	g.mu.Lock()
	g.passed++
	shut := g.shut
	g.mu.Unlock()
	if shut != nil {
		<-shut
	}
}

type gatedConnector struct {
	drv driver.Driver
	dsn string
	g   *gate
}

func (c gatedConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return gatedConn{conn, c.g}, nil
}

func (c gatedConnector) Driver() driver.Driver { return c.drv }

type gatedConn struct {
	driver.Conn
	g *gate
}

func (c gatedConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	c.g.pass(query)
	return c.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
}

func (c gatedConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	c.g.pass(query)
	return c.Conn.(driver.QueryerContext).QueryContext(ctx, query, args)
}

func (c gatedConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

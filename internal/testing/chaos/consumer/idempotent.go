package main

// The idempotent consumer (--store): the same handler made idempotent with
// package idempotency, on SQLite or PostgreSQL, so that the harness can
// show what it absorbs and what it still runs twice. Every message is
// recorded in the accept log once the wrapped handler has accepted it
// (a duplicate absorbed included), and its events go to a side log
// (--events), one line each, "event n pid unix-ms [error]":
//
//   - claimed: this process claimed n, and runs the handler;
//   - work: the handler's work for n was done (without --tx, the work is
//     this line itself);
//   - tx: with --tx, the work (a row of n in --work-table) was written in
//     the transaction, not yet committed;
//   - confirmed: the wrapper confirmed n after this process's run (with
//     --tx: the work and the confirmation committed);
//   - unconfirmed: the handler accepted, but the wrapper did not (the
//     confirm or the commit failed, or the claim was lost), with why;
//   - duplicate: a copy the store absorbed (n confirmed already);
//   - busy: a copy put back because another owner held n's claim.
//
// A run whose process was SIGKILLed after "work" and before "confirmed" is
// the one case the handler runs twice for a message; with --tx such a run
// leaves nothing, since its transaction never committed.

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/idempotency"
	"github.com/acemq-go/acemq/idempotency/sqlstore"
	"github.com/acemq-go/acemq/idempotency/sqlstore/postgres"
	"github.com/acemq-go/acemq/idempotency/sqlstore/sqlite"
)

type idempotentConfig struct {
	store   string
	table   string
	tx      bool
	work    string
	events  string
	timeout time.Duration
}

func idempotentFlags() *idempotentConfig {
	c := &idempotentConfig{}
	flag.StringVar(&c.store, "store", "", "the idempotency store, sqlite:PATH or a postgres:// URL: consume through idempotency.Handler (none: the plain handler)")
	flag.StringVar(&c.table, "store-table", contract.DefaultIdempotencyTable, "the idempotency store's table")
	flag.BoolVar(&c.tx, "tx", false, "do the work, a row (n, pid) in --work-table, in the transaction that confirms it (sqlstore.TxHandler)")
	flag.StringVar(&c.work, "work-table", "", "the work's table with --tx (it must exist: n INTEGER, pid INTEGER)")
	flag.StringVar(&c.events, "events", "", "the side log of the idempotent consumer's events (required with --store)")
	flag.DurationVar(&c.timeout, "claim-timeout", 3*time.Second, "the idempotency claim timeout")
	return c
}

func (c *idempotentConfig) enabled() bool { return c.store != "" }

// idempotentCounts are what the stats line reports.
type idempotentCounts struct{ absorbed, putBack atomic.Int64 }

// runKey carries a delivery's runState from the outer wrapper to the work.
type runKey struct{}

// runState is what the work of one delivery did.
type runState struct{ accepted bool }

// events is the side log.
type events struct {
	f   *os.File
	pid int
}

func (e *events) write(event string, n int, err error) error {
	line := fmt.Sprintf("%s %d %d %d", event, n, e.pid, time.Now().UnixMilli())
	if err != nil {
		line += " " + strconv.Quote(err.Error())
	}
	// One write of one line: a SIGKILL leaves it whole or not at all.
	_, werr := e.f.WriteString(line + "\n")
	return werr
}

// handler opens the store and returns the idempotent handler, the counts
// it keeps, and what closes the store and the side log.
func (c *idempotentConfig) handler(ctx context.Context, record func(int) error) (acemq.Handler[item], *idempotentCounts, func() error, error) {
	if c.events == "" || (c.tx && c.work == "") {
		return nil, nil, nil, errors.New("--store needs --events, and --tx needs --work-table")
	}
	var store *sqlstore.Store
	var err error
	values := "?, ?" // the work's insert
	opt := sqlstore.WithTable(c.table)
	switch {
	case strings.HasPrefix(c.store, "sqlite:"):
		store, err = sqlite.Open(ctx, strings.TrimPrefix(c.store, "sqlite:"), opt)
	case strings.HasPrefix(c.store, "postgres://"), strings.HasPrefix(c.store, "postgresql://"):
		store, err = postgres.Open(ctx, c.store, opt)
		values = "$1, $2"
	default:
		return nil, nil, nil, fmt.Errorf("--store %q: want sqlite:PATH or a postgres:// URL", c.store)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	f, err := os.OpenFile(c.events, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		store.Close()
		return nil, nil, nil, err
	}
	ev := &events{f: f, pid: os.Getpid()}
	counts := &idempotentCounts{}
	opts := []idempotency.Option{
		idempotency.WithClaimTimeout(c.timeout),
		idempotency.OnClaim(func(key string, r idempotency.Result) {
			n, err := strconv.Atoi(strings.TrimPrefix(key, "chaos-"))
			if err != nil {
				n = -1
			}
			switch r {
			case idempotency.Claimed:
				_ = ev.write("claimed", n, nil)
			case idempotency.Confirmed:
				counts.absorbed.Add(1)
				_ = ev.write("duplicate", n, nil)
			case idempotency.InProgress:
				counts.putBack.Add(1)
				_ = ev.write("busy", n, nil)
			}
		}),
	}
	var wrapped acemq.Handler[item]
	if c.tx {
		insert := "INSERT INTO " + c.work + " (n, pid) VALUES (" + values + ")"
		wrapped, err = sqlstore.TxHandler(store, func(ctx context.Context, tx *sql.Tx, m acemq.Message[item]) acemq.Decision {
			if err := failOnPurpose(m); err != nil {
				return acemq.Retry(err)
			}
			if _, err := tx.ExecContext(ctx, insert, m.Body.N, ev.pid); err != nil {
				return acemq.Retry(fmt.Errorf("the work of message %d: %w", m.Body.N, err))
			}
			if err := ev.write("tx", m.Body.N, nil); err != nil {
				return acemq.Retry(err)
			}
			ctx.Value(runKey{}).(*runState).accepted = true
			return acemq.Accept()
		}, opts...)
	} else {
		wrapped, err = idempotency.Handler(store, func(ctx context.Context, m acemq.Message[item]) acemq.Decision {
			if err := failOnPurpose(m); err != nil {
				return acemq.Retry(err)
			}
			if err := ev.write("work", m.Body.N, nil); err != nil {
				return acemq.Retry(err)
			}
			ctx.Value(runKey{}).(*runState).accepted = true
			return acemq.Accept()
		}, opts...)
	}
	if err != nil {
		return nil, nil, nil, errors.Join(err, f.Close(), store.Close())
	}
	h := func(ctx context.Context, m acemq.Message[item]) acemq.Decision {
		st := &runState{}
		d := wrapped(context.WithValue(ctx, runKey{}, st), m)
		n := m.Body.N
		switch {
		case st.accepted && d == acemq.Accept():
			_ = ev.write("confirmed", n, nil)
		case st.accepted:
			_ = ev.write("unconfirmed", n, d.Err())
		}
		if d != acemq.Accept() {
			return d
		}
		if err := record(n); err != nil {
			// Confirmed, but not recorded: the copy that comes back is a
			// duplicate the store absorbs, and is recorded then.
			return acemq.Retry(fmt.Errorf("recording message %d: %w", n, err))
		}
		return d
	}
	closeAll := func() error { return errors.Join(f.Close(), store.Close()) }
	return h, counts, closeAll, nil
}

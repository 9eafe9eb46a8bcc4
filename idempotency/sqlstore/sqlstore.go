// Package sqlstore is an idempotency.Store in a SQL table, shared by every
// consumer on the database: of the consumers claiming one message at once,
// exactly one is given it, in this process or another, in Go, Java or Ruby.
//
// It speaks database/sql and imports no driver: New takes a *sql.DB and the
// Dialect it speaks (SQLite or PostgreSQL). The sub-packages open one with a
// driver: sqlstore/sqlite (modernc.org/sqlite, pure Go) and
// sqlstore/postgres (github.com/jackc/pgx/v5). Each is a package of its
// own, like every store and format of this module, so that a program links
// and downloads only the driver it imports.
//
// The table (contract.DefaultIdempotencyTable unless WithTable names
// another) is the Java and Ruby libraries' exactly (CONTRACT.md section 16),
// made by Migrate, idempotent and safe to run from every process:
//
//	message_id  VARCHAR(255) PRIMARY KEY
//	state       VARCHAR(16)  CLAIMED or CONFIRMED
//	claimed_by  VARCHAR(64)  the claim's owner
//	recorded_at when the row was claimed or confirmed
//	expires_at  when the claim or the confirmation lapses
//	index <table>_expiry on expires_at
//
// The times are TIMESTAMPTZ on PostgreSQL. SQLite has no time type: there
// they are TEXT in RFC 3339 UTC with exactly three fractional digits
// ("2006-01-02T15:04:05.000Z"), so that comparing the text compares the
// times, as SQLite's own strftime('%Y-%m-%dT%H:%M:%fZ') writes them.
//
// A claim is an INSERT ... ON CONFLICT (message_id) DO UPDATE ... WHERE
// expires_at <= now RETURNING: it inserts, or takes over an expired row, or
// touches nothing; the database's row lock makes one of two racing claims
// the winner. The claims and confirms a store's callers make while one of
// its writes is in flight are made together when it returns, as one such
// statement (a group commit: one round trip and one commit for them all,
// and no wait for a caller alone); each caller is answered once the
// statement is committed, and a statement that fails is made again for
// each caller alone, so that the error is only the one whose write caused
// it. The times are the store's clock (the
// process's), not the database's: the consumers sharing a table need
// clocks that agree to well within the claim timeout.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/idempotency"
	"github.com/acemq-go/acemq/internal/sqldb"
)

// ErrNotIdempotencyTable is matched (errors.Is) by Migrate's error when the
// table exists without the columns of the idempotency table.
var ErrNotIdempotencyTable = errors.New("idempotency: the table exists without the idempotency table's columns")

var columns = []string{"message_id", "state", "claimed_by", "recorded_at", "expires_at"}

// Dialect is the SQL of a database: SQLite or PostgreSQL.
type Dialect struct {
	name   string
	param  func(n int) string
	create string // %[1]s the table, %[2]s the index
	lock   string // see Migrate
	// time is how a time is passed; readTime reads one back.
	time     func(time.Time) any
	readTime func(any) (time.Time, error)
}

// String names the database.
func (d Dialect) String() string { return d.name }

// SQLite is the dialect of SQLite (3.35 or later: RETURNING).
var SQLite = Dialect{
	name:  "SQLite",
	param: func(int) string { return "?" },
	create: `CREATE TABLE IF NOT EXISTS %[1]s (
	message_id VARCHAR(255) PRIMARY KEY,
	state VARCHAR(16) NOT NULL,
	claimed_by VARCHAR(64),
	recorded_at TEXT NOT NULL,
	expires_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS %[2]s ON %[1]s (expires_at)`,
	time:     func(t time.Time) any { return t.UTC().Format(contract.IdempotencySQLiteTimeLayout) },
	readTime: readSQLiteTime,
}

// PostgreSQL is the dialect of PostgreSQL (9.5 or later: ON CONFLICT).
var PostgreSQL = Dialect{
	name:  "PostgreSQL",
	param: func(n int) string { return fmt.Sprintf("$%d", n) },
	create: `CREATE TABLE IF NOT EXISTS %[1]s (
	message_id VARCHAR(255) PRIMARY KEY,
	state VARCHAR(16) NOT NULL,
	claimed_by VARCHAR(64),
	recorded_at TIMESTAMPTZ NOT NULL,
	expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX IF NOT EXISTS %[2]s ON %[1]s (expires_at)`,
	lock:     `SELECT pg_advisory_xact_lock($1)`,
	time:     func(t time.Time) any { return t.UTC() },
	readTime: readPostgresTime,
}

// Option configures New; a bad value is New's error, naming the option.
type Option func(*sqldb.Options) error

// WithTable names the table (default contract.DefaultIdempotencyTable):
// letters, digits and underscores, not starting with a digit, at most 56
// bytes so that its index name fits PostgreSQL's 63. It is not quoted, so
// PostgreSQL folds it to lower case; it is not schema-qualified (the
// connection's search path finds it), since the index is named after it.
func WithTable(name string) Option {
	return Option(sqldb.WithTable(name, contract.IdempotencyExpirySuffix))
}

// WithClock sets the store's time (default time.Now): a test's clock.
func WithClock(now func() time.Time) Option { return Option(sqldb.WithClock(now)) }

// OwnDB makes the store's Close close its database too. sqlite.Open and
// postgres.Open give it.
func OwnDB() Option { return Option(sqldb.OwnDB()) }

// Store is an idempotency.Store in a SQL table, safe for concurrent use.
type Store struct {
	db    *sql.DB
	d     Dialect
	table string
	owned bool
	now   func() time.Time

	// writes groups the claims, confirms and forgets (groupcommit.go);
	// the heads and tail are the SQL of a flight's statements (flight.go).
	writes                 group
	upsertHead, upsertTail string
	forgetHead, lookUpHead string
	row, prune             string
	confirmClaim           string // TxHandler's
}

var _ idempotency.Store = (*Store)(nil)

// New returns a store in db, which speaks d. It does not touch the
// database: call Migrate to make the table.
func New(db *sql.DB, d Dialect, opts ...Option) (*Store, error) {
	if db == nil {
		return nil, errors.New("idempotency: New needs a database")
	}
	if d.create == "" {
		return nil, errors.New("idempotency: New needs a dialect (sqlstore.SQLite or sqlstore.PostgreSQL)")
	}
	o, err := sqldb.Apply("idempotency", sqldb.Options{Table: contract.DefaultIdempotencyTable, Now: time.Now}, opts)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, d: d, table: o.Table, owned: o.Owned, now: o.Now}
	s.writes.fly = s.fly
	p, t := d.param, s.table
	claimed, confirmed := "'"+contract.IdempotencyClaimed+"'", "'"+contract.IdempotencyConfirmed+"'"
	// A claim inserts, or takes over an expired row; a confirm inserts or
	// overwrites, keeping the claim's owner (it passes none).
	s.upsertHead = "INSERT INTO " + t + " AS cur (message_id, state, claimed_by, recorded_at, expires_at) VALUES "
	s.upsertTail = " ON CONFLICT (message_id) DO UPDATE SET state = excluded.state," +
		" claimed_by = COALESCE(excluded.claimed_by, cur.claimed_by)," +
		" recorded_at = excluded.recorded_at, expires_at = excluded.expires_at" +
		" WHERE excluded.state = " + confirmed + " OR cur.expires_at <= excluded.recorded_at RETURNING message_id"
	s.forgetHead = "DELETE FROM " + t + " WHERE state = " + claimed + " AND ("
	s.lookUpHead = "SELECT message_id, state, claimed_by, expires_at FROM " + t + " WHERE message_id IN "
	s.confirmClaim = "UPDATE " + t + " SET state = " + confirmed + ", recorded_at = " + p(1) + ", expires_at = " + p(2) +
		" WHERE message_id = " + p(3) + " AND claimed_by = " + p(4) + " AND state = " + claimed
	s.row = "SELECT state, claimed_by, expires_at FROM " + t + " WHERE message_id = " + p(1)
	s.prune = "DELETE FROM " + t + " WHERE expires_at <= " + p(1)
	return s, nil
}

// Table is the name of the store's table.
func (s *Store) Table() string { return s.table }

// DB is the store's database.
func (s *Store) DB() *sql.DB { return s.db }

// Close closes the database if the store owns it (OwnDB).
func (s *Store) Close() error {
	if s.owned {
		return s.db.Close()
	}
	return nil
}

// Migrate creates the table and its index unless they exist, and checks
// that an existing table has the idempotency columns
// (ErrNotIdempotencyTable otherwise, before any index is made on it). It
// is idempotent, and concurrent calls from several processes are safe.
func (s *Store) Migrate(ctx context.Context) error {
	ddl := strings.Split(fmt.Sprintf(s.d.create, s.table, s.table+contract.IdempotencyExpirySuffix), ";\n")
	return sqldb.Migrate(ctx, s.db, sqldb.Schema{What: "idempotency", Table: s.table, Dialect: s.d,
		Lock: s.d.lock, LockKey: sqldb.LockKey("acemq idempotency " + s.table),
		Create: ddl[0], Indexes: ddl[1:], Columns: columns, NotOurs: ErrNotIdempotencyTable})
}

// Claim implements idempotency.Store. Claims made while another write of
// the store is in flight are made together, in one statement, when it
// returns; each is answered once its own is committed.
func (s *Store) Claim(ctx context.Context, key, owner string, timeout time.Duration) (idempotency.Result, error) {
	o, err := claimOp(key, owner, timeout)
	if err != nil {
		return 0, err
	}
	return s.writes.do(ctx, o)
}

// Confirm implements idempotency.Store; it is grouped with the claims and
// confirms made beside it, as Claim is.
func (s *Store) Confirm(ctx context.Context, key string, retention time.Duration) error {
	if err := errors.Join(idempotency.CheckKey(key), idempotency.CheckDuration("retention", retention)); err != nil {
		return err
	}
	_, err := s.writes.do(ctx, &op{kind: opConfirm, key: key, d: retention})
	return err
}

// Forget implements idempotency.Store; it is grouped with the forgets made
// beside it.
func (s *Store) Forget(ctx context.Context, key, owner string) error {
	_, err := s.writes.do(ctx, &op{kind: opForget, key: key, owner: owner})
	return err
}

// Prune implements idempotency.Store.
func (s *Store) Prune(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, s.prune, s.d.time(now))
	if err != nil {
		return 0, fmt.Errorf("idempotency: prune table %s: %w", s.table, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("idempotency: prune table %s: %w", s.table, err)
	}
	return n, nil
}

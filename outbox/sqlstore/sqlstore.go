// Package sqlstore is the transactional outbox's table in SQLite or
// PostgreSQL: a service writes a record in its own transaction (Write),
// beside its business rows, and relays (outbox.Relay) claim, publish and
// mark the records, several at once, in this process or others.
//
// It speaks database/sql and imports no driver: New takes a *sql.DB and the
// Dialect it speaks (SQLite or PostgreSQL). The sub-packages open one with
// a driver: sqlstore/sqlite (modernc.org/sqlite, pure Go) and
// sqlstore/postgres (github.com/jackc/pgx/v5, which also writes records in
// a pgx.Tx). Each is a package of its own, so that a program links and
// downloads only the driver it imports.
//
// The table (contract.DefaultOutboxTable unless WithTable names another)
// has Ruby's columns (CONTRACT.md section 16), made by Migrate, idempotent
// and safe to run from every process:
//
//	id             BIGSERIAL (SQLite: INTEGER AUTOINCREMENT) PRIMARY KEY
//	exchange_name  VARCHAR(255) NOT NULL
//	routing_key    VARCHAR(255) NOT NULL
//	body           TEXT NOT NULL, as body_encoding says
//	body_encoding  VARCHAR(16) NOT NULL: text or base64
//	content_type   VARCHAR(255)
//	headers        TEXT: a JSON object, the envelope's headers included
//	created_at     when the record was written
//	published_at   when its publish was confirmed; NULL until then
//	attempts       INTEGER NOT NULL DEFAULT 0: failed publishes counted
//	last_error     VARCHAR(1000): the last failure
//	locked_by      VARCHAR(255): the relay holding its lease
//	locked_until   when the lease ends (or, without locked_by, a retry delay)
//	index <table>_pending on (published_at, created_at)
//	index <table>_unsent on (id) where published_at IS NULL: this
//	library's own, so that a claim (the first unpublished records, in id
//	order) does not read past the published records the table keeps
//
// The times are TIMESTAMPTZ on PostgreSQL; on SQLite, TEXT in RFC 3339 UTC
// with three fractional digits (contract.OutboxSQLiteTimeLayout), which
// sorts as the times do. They are the store's clock (the process's), so
// the relays sharing a table need clocks that agree to well within the
// lease.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/sqldb"
	"github.com/acemq-go/acemq/outbox"
)

// ErrNotOutboxTable is matched (errors.Is) by Migrate's error when the
// table exists without the outbox table's columns.
var ErrNotOutboxTable = errors.New("outbox: the table exists without the outbox table's columns")

var columns = []string{"id", "exchange_name", "routing_key", "body", "body_encoding", "content_type", "headers",
	"created_at", "published_at", "attempts", "last_error", "locked_by", "locked_until"}

// claimed is what a claim reads of each record.
const claimed = "id, exchange_name, routing_key, body, body_encoding, content_type, headers, created_at, attempts"

// Dialect is the SQL of a database: SQLite or PostgreSQL.
type Dialect struct {
	name   string
	param  func(n int) string
	create string // %[1]s the table, %[2]s the index
	lock   string // an advisory lock for the transaction, by a number
	skip   string // what a claim's select ends with, to pass over rows another claim holds
	// indexedBy, when set, names the unsent index in a claim's FROM: SQLite's
	// planner preferred the pending index and a sort, reading every
	// unpublished record a claim.
	indexedBy string
	time      func(time.Time) any
}

// String names the database.
func (d Dialect) String() string { return d.name }

// SQLite is the dialect of SQLite (3.35 or later: RETURNING). A claim is
// one conditional UPDATE, which SQLite runs alone (one writer at a time).
var SQLite = Dialect{
	name:  "SQLite",
	param: func(n int) string { return "?" + strconv.Itoa(n) },
	create: `CREATE TABLE IF NOT EXISTS %[1]s (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	exchange_name VARCHAR(255) NOT NULL,
	routing_key VARCHAR(255) NOT NULL,
	body TEXT NOT NULL,
	body_encoding VARCHAR(16) NOT NULL,
	content_type VARCHAR(255),
	headers TEXT,
	created_at TEXT NOT NULL,
	published_at TEXT,
	attempts INTEGER NOT NULL DEFAULT 0,
	last_error VARCHAR(1000),
	locked_by VARCHAR(255),
	locked_until TEXT
);
CREATE INDEX IF NOT EXISTS %[2]s ON %[1]s (published_at, created_at);
CREATE INDEX IF NOT EXISTS %[3]s ON %[1]s (id) WHERE published_at IS NULL`,
	indexedBy: " INDEXED BY ",
	time:      func(t time.Time) any { return t.UTC().Format(contract.OutboxSQLiteTimeLayout) },
}

// PostgreSQL is the dialect of PostgreSQL (9.5 or later: SKIP LOCKED). A
// claim selects its records FOR UPDATE SKIP LOCKED, so that relays
// claiming at once take different ones.
var PostgreSQL = Dialect{
	name:  "PostgreSQL",
	param: func(n int) string { return "$" + strconv.Itoa(n) },
	create: `CREATE TABLE IF NOT EXISTS %[1]s (
	id BIGSERIAL PRIMARY KEY,
	exchange_name VARCHAR(255) NOT NULL,
	routing_key VARCHAR(255) NOT NULL,
	body TEXT NOT NULL,
	body_encoding VARCHAR(16) NOT NULL,
	content_type VARCHAR(255),
	headers TEXT,
	created_at TIMESTAMPTZ NOT NULL,
	published_at TIMESTAMPTZ,
	attempts INTEGER NOT NULL DEFAULT 0,
	last_error VARCHAR(1000),
	locked_by VARCHAR(255),
	locked_until TIMESTAMPTZ
);
CREATE INDEX IF NOT EXISTS %[2]s ON %[1]s (published_at, created_at);
CREATE INDEX IF NOT EXISTS %[3]s ON %[1]s (id) WHERE published_at IS NULL`,
	lock: `SELECT pg_advisory_xact_lock($1)`,
	skip: " FOR UPDATE SKIP LOCKED",
	time: func(t time.Time) any { return t.UTC() },
}

// Option configures New; a bad value is New's error, naming the option.
type Option func(*sqldb.Options) error

// WithTable names the table (default contract.DefaultOutboxTable):
// letters, digits and underscores, not starting with a digit, at most 55
// bytes so that its index name fits PostgreSQL's 63. It is not quoted, so
// PostgreSQL folds it to lower case, and not schema-qualified.
func WithTable(name string) Option {
	return Option(sqldb.WithTable(name, contract.OutboxPendingSuffix))
}

// WithClock sets the store's time (default time.Now): a test's clock.
func WithClock(now func() time.Time) Option { return Option(sqldb.WithClock(now)) }

// OwnDB makes the store's Close close its database too. sqlite.Open and
// postgres.Open give it.
func OwnDB() Option { return Option(sqldb.OwnDB()) }

// Store is an outbox.Store in a SQL table, safe for concurrent use.
type Store struct {
	db    *sql.DB
	d     Dialect
	table string
	owned bool
	now   func() time.Time

	insert, claim, claimOrdered, failed, lag, prune string
}

var _ outbox.Store = (*Store)(nil)

// New returns a store in db, which speaks d. It does not touch the
// database: call Migrate to make the table.
func New(db *sql.DB, d Dialect, opts ...Option) (*Store, error) {
	if db == nil {
		return nil, errors.New("outbox: New needs a database")
	}
	if d.create == "" {
		return nil, errors.New("outbox: New needs a dialect (sqlstore.SQLite or sqlstore.PostgreSQL)")
	}
	o, err := sqldb.Apply("outbox", sqldb.Options{Table: contract.DefaultOutboxTable, Now: time.Now}, opts)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, d: d, table: o.Table, owned: o.Owned, now: o.Now}
	p, t := d.param, s.table
	unsent := t // what a claim reads, the unpublished records, in id order
	if d.indexedBy != "" {
		unsent = t + d.indexedBy + t + contract.OutboxUnsentSuffix
	}
	s.insert = "INSERT INTO " + t + " (exchange_name, routing_key, body, body_encoding, content_type, headers, created_at, attempts)" +
		" VALUES (" + p(1) + ", " + p(2) + ", " + p(3) + ", " + p(4) + ", " + p(5) + ", " + p(6) + ", " + p(7) + ", 0) RETURNING id"
	// 1 owner, 2 lease end, 3 max attempts, 4 now, 5 limit.
	s.claim = "UPDATE " + t + " SET locked_by = " + p(1) + ", locked_until = " + p(2) +
		" WHERE id IN (SELECT id FROM " + unsent + " WHERE published_at IS NULL AND attempts < " + p(3) +
		" AND (locked_until IS NULL OR locked_until <= " + p(4) + ") ORDER BY id LIMIT " + p(5) + d.skip + ")" +
		" RETURNING " + claimed
	// The first unpublished records, up to the first one not due (given
	// up, waiting out a retry delay, or leased by another owner), and none
	// at all while another owner holds a lease on any.
	s.claimOrdered = "WITH head AS (SELECT id, attempts, locked_by, locked_until FROM " + unsent +
		" WHERE published_at IS NULL ORDER BY id LIMIT " + p(5) + ")," +
		" stop AS (SELECT MIN(id) AS id FROM head WHERE attempts >= " + p(3) +
		" OR (locked_until > " + p(4) + " AND (locked_by IS NULL OR locked_by <> " + p(1) + ")))" +
		" UPDATE " + t + " SET locked_by = " + p(1) + ", locked_until = " + p(2) +
		" WHERE id IN (SELECT id FROM head WHERE id < COALESCE((SELECT id FROM stop), " + strconv.FormatInt(math.MaxInt64, 10) + "))" +
		" AND NOT EXISTS (SELECT 1 FROM " + t + " AS other WHERE other.published_at IS NULL" +
		" AND other.locked_until > " + p(4) + " AND other.locked_by <> " + p(1) + ")" +
		" RETURNING " + claimed
	s.failed = "UPDATE " + t + " SET attempts = attempts + " + p(1) + ", last_error = " + p(2) +
		", locked_by = NULL, locked_until = " + p(3) + " WHERE id = " + p(4) + " AND locked_by = " + p(5) + " AND published_at IS NULL"
	s.lag = "SELECT COUNT(*), COALESCE(SUM(CASE WHEN attempts >= " + p(1) + " THEN 1 ELSE 0 END), 0), MIN(created_at) FROM " + t +
		" WHERE published_at IS NULL"
	s.prune = "DELETE FROM " + t + " WHERE published_at IS NOT NULL AND published_at <= " + p(1)
	return s, nil
}

// Table is the name of the store's table.
func (s *Store) Table() string { return s.table }

// DB is the store's database.
func (s *Store) DB() *sql.DB { return s.db }

// Dialect is the SQL the store speaks.
func (s *Store) Dialect() Dialect { return s.d }

// Close closes the database if the store owns it (OwnDB).
func (s *Store) Close() error {
	if s.owned {
		return s.db.Close()
	}
	return nil
}

// Migrate creates the table and its indexes unless they exist, and checks
// that an existing table has the outbox columns (ErrNotOutboxTable
// otherwise, before any index is made on it). It is idempotent, and
// concurrent calls from several processes are safe.
func (s *Store) Migrate(ctx context.Context) error {
	ddl := strings.Split(fmt.Sprintf(s.d.create, s.table, s.table+contract.OutboxPendingSuffix, s.table+contract.OutboxUnsentSuffix), ";\n")
	return sqldb.Migrate(ctx, s.db, sqldb.Schema{What: "outbox", Table: s.table, Dialect: s.d,
		Lock: s.d.lock, LockKey: s.lockKey("migrate"),
		Create: ddl[0], Indexes: ddl[1:], Columns: columns, NotOurs: ErrNotOutboxTable})
}

// lockKey is the advisory lock of one of the table's operations.
func (s *Store) lockKey(what string) int64 {
	return sqldb.LockKey("acemq outbox " + what + " " + s.table)
}

// Querier is what Write needs of a transaction: a *sql.Tx (or a *sql.DB
// or *sql.Conn, to write a record alone).
type Querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Write adds m to the outbox in tx, the caller's transaction, and returns
// the record's id: the relay publishes it once tx commits, and never if it
// rolls back. The body is encoded and the envelope written now
// (outbox.Encode); an error of either writes nothing.
func (s *Store) Write(ctx context.Context, tx Querier, m outbox.Message) (int64, error) {
	query, args, err := s.InsertStatement(m)
	if err != nil {
		return 0, err
	}
	var id int64
	if err := tx.QueryRowContext(ctx, query, args...).Scan(&id); err != nil {
		return 0, fmt.Errorf("outbox: write a record to table %s: %w", s.table, err)
	}
	return id, nil
}

// InsertStatement is the statement that writes m, returning the record's
// id, and its arguments: for a transaction of another interface than
// database/sql's (package sqlstore/postgres's Write runs it in a pgx.Tx).
func (s *Store) InsertStatement(m outbox.Message) (query string, args []any, err error) {
	for _, f := range []struct{ name, value string }{{"exchange", m.Exchange}, {"routing key", m.RoutingKey}} {
		if !utf8.ValidString(f.value) || len(f.value) > maxName {
			return "", nil, fmt.Errorf("outbox: the %s %q is not at most %d bytes of UTF-8", f.name, f.value, maxName)
		}
	}
	now := s.now()
	row, err := outbox.Encode(m, now)
	if err != nil {
		return "", nil, err
	}
	return s.insert, []any{row.Exchange, row.RoutingKey, row.Body, row.BodyEncoding, nullable(row.ContentType), row.Headers, s.d.time(now)}, nil
}

// maxName is AMQP's longest exchange name and routing key, in bytes.
const maxName = 255

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Claim implements outbox.Store.
func (s *Store) Claim(ctx context.Context, c outbox.Claim) ([]outbox.Record, error) {
	if c.Owner == "" || c.Limit < 1 || c.Lease <= 0 || c.MaxAttempts < 1 {
		return nil, fmt.Errorf("outbox: claim: the owner must be named, and the limit, lease and attempts positive (%+v)", c)
	}
	now := s.now()
	args := []any{c.Owner, s.d.time(now.Add(c.Lease)), c.MaxAttempts, s.d.time(now), c.Limit}
	if !c.Ordered {
		return s.claimRows(ctx, s.db, s.claim, args)
	}
	if s.d.lock == "" {
		// SQLite runs one writing statement at a time: the claim is alone.
		return s.claimRows(ctx, s.db, s.claimOrdered, args)
	}
	// PostgreSQL: the check for another owner's lease must see the claim
	// before it, so ordered claims take turns.
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("outbox: claim records in table %s: %w", s.table, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, s.d.lock, s.lockKey("claim")); err != nil {
		return nil, fmt.Errorf("outbox: claim records in table %s: %w", s.table, err)
	}
	recs, err := s.claimRows(ctx, tx, s.claimOrdered, args)
	if err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("outbox: claim records in table %s: %w", s.table, err)
	}
	return recs, nil
}

func (s *Store) claimRows(ctx context.Context, q sqldb.Querier, query string, args []any) ([]outbox.Record, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("outbox: claim records in table %s: %w", s.table, err)
	}
	defer rows.Close()
	var recs []outbox.Record
	for rows.Next() {
		var (
			rec                                      outbox.Record
			exchange, key, body, enc, ctype, headers sql.NullString
			created                                  any
			attempts                                 sql.NullInt64
		)
		if err := rows.Scan(&rec.ID, &exchange, &key, &body, &enc, &ctype, &headers, &created, &attempts); err != nil {
			return nil, fmt.Errorf("outbox: claim records in table %s: %w", s.table, err)
		}
		rec.Exchange, rec.RoutingKey, rec.Attempts = exchange.String, key.String, int(attempts.Int64)
		rec.Message, rec.Err = outbox.Row{Exchange: exchange.String, RoutingKey: key.String, Body: body.String,
			BodyEncoding: enc.String, ContentType: ctype.String, Headers: headers.String}.Message()
		at, err := ReadTime(created)
		if err != nil && rec.Err == nil {
			rec.Err = fmt.Errorf("%w: created_at: %w", outbox.ErrBadRecord, err)
		}
		rec.CreatedAt = at
		if rec.Err != nil {
			rec.Err = fmt.Errorf("record %d: %w", rec.ID, rec.Err)
		}
		recs = append(recs, rec)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("outbox: claim records in table %s: %w", s.table, err)
	}
	// RETURNING says nothing of order.
	sortByID(recs)
	return recs, nil
}

func sortByID(recs []outbox.Record) {
	for i := 1; i < len(recs); i++ {
		for j := i; j > 0 && recs[j].ID < recs[j-1].ID; j-- {
			recs[j], recs[j-1] = recs[j-1], recs[j]
		}
	}
}

// ReadTime reads a time as a store's database returns it: a time
// (PostgreSQL), or text in contract.OutboxSQLiteTimeLayout or any RFC 3339
// form (SQLite); NULL is the zero time.
func ReadTime(v any) (time.Time, error) {
	switch x := v.(type) {
	case nil:
		return time.Time{}, nil
	case time.Time:
		return x, nil
	case []byte:
		return ParseTime(string(x))
	case string:
		return ParseTime(x)
	}
	return time.Time{}, fmt.Errorf("a time stored as %T", v)
}

// ParseTime reads a time SQLite keeps as text: RFC 3339, as
// contract.OutboxSQLiteTimeLayout writes it or with any other precision
// and offset.
func ParseTime(text string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, text)
	if err != nil {
		return time.Time{}, fmt.Errorf("the time %q is not RFC 3339 (%s)", clip(text), contract.OutboxSQLiteTimeLayout)
	}
	return t, nil
}

func clip(s string) string {
	if len(s) > 64 {
		return strings.ToValidUTF8(s[:64], "") + "..."
	}
	return s
}

// Published implements outbox.Store.
func (s *Store) Published(ctx context.Context, ids []int64) error {
	now := s.d.time(s.now())
	return s.eachChunk(ids, func(chunk []int64) error {
		query, args := s.markStatement(now, chunk)
		if _, err := s.db.ExecContext(ctx, query, args...); err != nil {
			return fmt.Errorf("outbox: mark %d records published in table %s: %w", len(chunk), s.table, err)
		}
		return nil
	})
}

// markStatement is the statement that marks ids published at now. It
// finds the records by id alone, bounded by the batch's lowest and highest
// (a range the planner serves from the primary key without statistics),
// and keeps the time of one marked already in its SET: a WHERE on
// published_at IS NULL was served by the pending index, which SQLite,
// and PostgreSQL with statistics that do not know of a backlog, read
// whole, every unpublished record a batch.
func (s *Store) markStatement(now any, ids []int64) (string, []any) {
	p := s.d.param
	return s.inList("UPDATE "+s.table+" SET published_at = COALESCE(published_at, "+p(1)+
		"), locked_by = NULL, locked_until = NULL WHERE id BETWEEN "+p(2)+" AND "+p(3)+" AND id IN ",
		[]any{now, slices.Min(ids), slices.Max(ids)}, ids)
}

// Release implements outbox.Store.
func (s *Store) Release(ctx context.Context, owner string, ids []int64) error {
	return s.eachChunk(ids, func(chunk []int64) error {
		query, args := s.inList("UPDATE "+s.table+" SET locked_by = NULL, locked_until = NULL WHERE locked_by = "+s.d.param(1)+
			" AND published_at IS NULL AND id IN ", []any{owner}, chunk)
		if _, err := s.db.ExecContext(ctx, query, args...); err != nil {
			return fmt.Errorf("outbox: release %d records in table %s: %w", len(chunk), s.table, err)
		}
		return nil
	})
}

// chunk bounds the ids of one statement (SQLite takes 32766 parameters,
// PostgreSQL 65535).
const chunk = 1000

func (s *Store) eachChunk(ids []int64, f func([]int64) error) error {
	for len(ids) > 0 {
		n := min(len(ids), chunk)
		if err := f(ids[:n]); err != nil {
			return err
		}
		ids = ids[n:]
	}
	return nil
}

// inList appends "(p, p, ...)" for ids to query, after args.
func (s *Store) inList(query string, args []any, ids []int64) (string, []any) {
	var b strings.Builder
	b.WriteString(query)
	b.WriteByte('(')
	for i, id := range ids {
		if i > 0 {
			b.WriteString(", ")
		}
		args = append(args, id)
		b.WriteString(s.d.param(len(args)))
	}
	b.WriteByte(')')
	return b.String(), args
}

// Failed implements outbox.Store.
func (s *Store) Failed(ctx context.Context, f outbox.Failure) error {
	counted := 0
	if f.Counted {
		counted = 1
	}
	retry := s.d.time(s.now().Add(max(f.RetryDelay, 0)))
	if _, err := s.db.ExecContext(ctx, s.failed, counted, CutError(f.Error), retry, f.ID, f.Owner); err != nil {
		return fmt.Errorf("outbox: record the failure of record %d in table %s: %w", f.ID, s.table, err)
	}
	return nil
}

// CutError cuts an error to contract.OutboxMaxError characters, the
// length of last_error, and makes it valid UTF-8.
func CutError(text string) string {
	text = strings.ToValidUTF8(text, "\uFFFD")
	if utf8.RuneCountInString(text) <= contract.OutboxMaxError {
		return text
	}
	r := []rune(text)
	return string(r[:contract.OutboxMaxError-1]) + "…"
}

// Lag implements outbox.Store.
func (s *Store) Lag(ctx context.Context, maxAttempts int) (outbox.Lag, error) {
	var lag outbox.Lag
	var oldest any
	if err := s.db.QueryRowContext(ctx, s.lag, maxAttempts).Scan(&lag.Pending, &lag.GivenUp, &oldest); err != nil {
		return outbox.Lag{}, fmt.Errorf("outbox: read the lag of table %s: %w", s.table, err)
	}
	lag.Pending -= lag.GivenUp
	at, err := ReadTime(oldest)
	if err != nil {
		return outbox.Lag{}, fmt.Errorf("outbox: read the lag of table %s: created_at: %w", s.table, err)
	}
	if !at.IsZero() {
		lag.Oldest = max(s.now().Sub(at), 0)
	}
	return lag, nil
}

// Prune implements outbox.Store.
func (s *Store) Prune(ctx context.Context, retention time.Duration) (int64, error) {
	if retention < 0 {
		return 0, fmt.Errorf("outbox: prune table %s: the retention %v is negative", s.table, retention)
	}
	res, err := s.db.ExecContext(ctx, s.prune, s.d.time(s.now().Add(-retention)))
	if err != nil {
		return 0, fmt.Errorf("outbox: prune table %s: %w", s.table, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("outbox: prune table %s: %w", s.table, err)
	}
	return n, nil
}

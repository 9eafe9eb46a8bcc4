package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"strings"
)

// Schema is a store's table, as Migrate makes and checks it.
type Schema struct {
	What    string // the store, for errors: "outbox"
	Table   string
	Dialect fmt.Stringer // names the database in errors
	// Lock, when set, is an advisory lock statement taking LockKey, run
	// first: concurrent CREATE ... IF NOT EXISTS can fail on PostgreSQL (a
	// unique violation in its catalogue) unless serialised.
	Lock    string
	LockKey int64
	Create  string   // CREATE TABLE IF NOT EXISTS
	Indexes []string // CREATE INDEX IF NOT EXISTS each
	Columns []string
	// NotOurs is wrapped by the error of a table that lacks Columns: the
	// table of another library, say.
	NotOurs error
}

// Migrate creates the table unless it exists, checks that it has the
// schema's columns (before any index is made on another's table), and
// creates its index unless it exists, in one transaction.
func Migrate(ctx context.Context, db *sql.DB, s Schema) error {
	fail := func(what string, err error) error {
		return fmt.Errorf("%s: %s %s on %s: %w", s.What, what, s.Table, s.Dialect, err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fail("create table", err)
	}
	defer tx.Rollback() // after Commit it does nothing
	if s.Lock != "" {
		if _, err := tx.ExecContext(ctx, s.Lock, s.LockKey); err != nil {
			return fail("create table", err)
		}
	}
	if _, err := tx.ExecContext(ctx, s.Create); err != nil {
		return fail("create table", err)
	}
	have, missing, err := MissingColumns(ctx, tx, s.Table, s.Columns)
	if err != nil {
		return fail("read table", err)
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s has columns %s, not %s (WithTable names another table)",
			s.NotOurs, s.Table, strings.Join(have, ", "), strings.Join(missing, ", "))
	}
	for _, index := range s.Indexes {
		if _, err := tx.ExecContext(ctx, index); err != nil {
			return fail("create index for", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fail("create table", err)
	}
	return nil
}

// LockKey is the advisory lock key of words (the store, an operation, the
// table): a hash, so that stores of different tables do not wait on each
// other.
func LockKey(words string) int64 {
	h := fnv.New64a()
	h.Write([]byte(words))
	return int64(h.Sum64())
}

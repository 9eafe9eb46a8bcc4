package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/acemq-go/acemq/contract"
)

// ErrBadRow is matched (errors.Is) by the error of a row the store cannot
// read: a state other than CLAIMED and CONFIRMED, an owner that is not
// UTF-8, an expiry that is not a time (on SQLite, not text in
// contract.IdempotencySQLiteTimeLayout). Another program wrote it, or the
// table is damaged; the message is retried, never guessed about.
var ErrBadRow = errors.New("idempotency: a row the store cannot read")

// record is a row of the table as the store reads it back.
type record struct {
	State   string // contract.IdempotencyClaimed or contract.IdempotencyConfirmed
	Owner   string // "" when claimed_by is NULL (a confirmation may have none)
	Expires time.Time
}

// rowQuerier is a *sql.DB or a *sql.Tx.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// read reads key's row: sql.ErrNoRows as it is when there is none.
func (s *Store) read(ctx context.Context, q rowQuerier, key string) (record, error) {
	var state string
	var owner sql.NullString
	var expires any
	err := q.QueryRowContext(ctx, s.row, key).Scan(&state, &owner, &expires)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return record{}, err
	case err != nil:
		return record{}, fmt.Errorf("idempotency: read %q in table %s: %w", key, s.table, err)
	}
	rec, err := decodeRecord(s.d, state, owner, expires)
	if err != nil {
		return record{}, fmt.Errorf("%w: the row of %q in table %s: %w", ErrBadRow, key, s.table, err)
	}
	return rec, nil
}

// decodeRecord checks a row's columns as the database gave them: a row
// another program wrote, or a damaged one, is an error that says what is
// wrong, never a panic or a state guessed.
func decodeRecord(d Dialect, state string, owner sql.NullString, expires any) (record, error) {
	if err := checkState(state); err != nil {
		return record{}, err
	}
	if owner.Valid && !utf8.ValidString(owner.String) {
		return record{}, fmt.Errorf("claimed_by %q is not UTF-8", owner.String)
	}
	t, err := d.readTime(expires)
	if err != nil {
		return record{}, fmt.Errorf("expires_at: %w", err)
	}
	return record{State: state, Owner: owner.String, Expires: t}, nil
}

// checkState refuses a state that is neither of the table's two.
func checkState(state string) error {
	if state != contract.IdempotencyClaimed && state != contract.IdempotencyConfirmed {
		return fmt.Errorf("state %q is neither %s nor %s", state, contract.IdempotencyClaimed, contract.IdempotencyConfirmed)
	}
	return nil
}

// readSQLiteTime reads a time as SQLite keeps it: text in
// contract.IdempotencySQLiteTimeLayout, exactly.
func readSQLiteTime(v any) (time.Time, error) {
	var text string
	switch v := v.(type) {
	case string:
		text = v
	case []byte:
		text = string(v)
	default:
		return time.Time{}, fmt.Errorf("a %T, not the text of a time", v)
	}
	t, err := time.Parse(contract.IdempotencySQLiteTimeLayout, text)
	if err != nil || t.Format(contract.IdempotencySQLiteTimeLayout) != text {
		return time.Time{}, fmt.Errorf("%q is not a time in the layout %s", text, contract.IdempotencySQLiteTimeLayout)
	}
	return t, nil
}

// readPostgresTime reads a TIMESTAMPTZ as pgx gives it.
func readPostgresTime(v any) (time.Time, error) {
	t, ok := v.(time.Time)
	if !ok {
		return time.Time{}, fmt.Errorf("a %T, not a time", v)
	}
	return t, nil
}

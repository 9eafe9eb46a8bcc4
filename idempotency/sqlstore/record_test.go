package sqlstore

import (
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/contract"
)

// FuzzDecodeRecord feeds a row's columns, as SQLite's driver gives them
// (text, or bytes), to the decoder of both dialects: a bad row is an
// error, never a panic, and a row read is one the store could have
// written.
func FuzzDecodeRecord(f *testing.F) {
	f.Add("CLAIMED", "host:1:abcdef", true, "2025-03-01T12:05:00.000Z", false)
	f.Add("CONFIRMED", "", false, "2025-03-02T12:00:00.000Z", true)
	f.Add("claimed", "me", true, "2025-03-01T12:05:00.000Z", false)
	f.Add("", "me", true, "", false)
	f.Add("CONFIRMED", "\xff\xfe", true, "2025-03-01T12:05:00Z", false)
	f.Add("CLAIMED", "me", true, "2025-03-01 12:05:00", false)
	f.Add("CLAIMED", "me", true, "2025-02-30T12:05:00.000Z", false)
	f.Add("CLAIMED", "me", true, "2025-03-01T12:05:00.000+01:00", false)
	f.Add("CLAIMED", "me", true, "9999-12-31T23:59:59.999Z", true)
	f.Fuzz(func(t *testing.T, state, owner string, valid bool, expires string, asBytes bool) {
		var v any = expires
		if asBytes {
			v = []byte(expires)
		}
		rec, err := decodeRecord(SQLite, state, sql.NullString{String: owner, Valid: valid}, v)
		if err == nil {
			if rec.State != contract.IdempotencyClaimed && rec.State != contract.IdempotencyConfirmed {
				t.Errorf("state %q read without an error", rec.State)
			}
			if got := SQLite.time(rec.Expires); got != expires {
				t.Errorf("expires_at %q read as %v, which is written %q", expires, rec.Expires, got)
			}
		} else if err.Error() == "" {
			t.Error("an error without a message")
		}
		if _, err := decodeRecord(PostgreSQL, state, sql.NullString{String: owner, Valid: valid}, v); err == nil {
			t.Errorf("PostgreSQL read the text %q as a TIMESTAMPTZ", expires)
		}
	})
}

func TestDecodeRecord(t *testing.T) {
	at := time.Date(2025, 3, 1, 12, 5, 0, 0, time.UTC)
	rec, err := decodeRecord(PostgreSQL, "CONFIRMED", sql.NullString{}, at)
	if err != nil || rec != (record{State: "CONFIRMED", Expires: at}) {
		t.Errorf("a PostgreSQL row: %+v, %v", rec, err)
	}
	for _, c := range []struct {
		state, expires string
		want           string
	}{
		{"DONE", "2025-03-01T12:05:00.000Z", `state "DONE" is neither CLAIMED nor CONFIRMED`},
		{"CLAIMED", "2025-03-01 12:05:00", `expires_at: "2025-03-01 12:05:00" is not a time in the layout 2006-01-02T15:04:05.000Z`},
		{"CLAIMED", "2025-03-01T12:05:00.5Z", `is not a time in the layout`},
	} {
		_, err := decodeRecord(SQLite, c.state, sql.NullString{String: "me", Valid: true}, c.expires)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("decodeRecord(%q, %q) = %v; want an error saying %s", c.state, c.expires, err, c.want)
		}
	}
	if _, err := decodeRecord(SQLite, "CLAIMED", sql.NullString{}, int64(7)); err == nil || !strings.Contains(err.Error(), "a int64, not the text of a time") {
		t.Errorf("an integer expires_at: %v", err)
	}
}

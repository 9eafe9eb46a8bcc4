package sqlstore_test

import (
	"testing"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/outbox/sqlstore"
)

// A time SQLite keeps as text reads back as the time written, and any
// other text is an error, never a panic.
func FuzzParseTime(f *testing.F) {
	for _, seed := range []string{
		"2025-03-01T12:00:00.000Z", "2025-03-01T12:00:00Z", "2025-03-01T13:00:00.123456789+01:00",
		"2025-03-01 12:00:00", "", "garbage", "9999-12-31T23:59:59.999Z", "2025-02-30T00:00:00.000Z", "2025-03-01T12:00:00.000+99:00", "9999-12-31T23:59:59.999-01:00", "0000-01-01T00:00:00+01:00",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		at, err := sqlstore.ParseTime(text)
		if err != nil {
			return
		}
		if y := at.UTC().Year(); y < 0 || y > 9999 {
			return // an offset took it out of RFC 3339's years: the store never writes one
		}
		again := at.UTC().Format(contract.OutboxSQLiteTimeLayout)
		back, err := sqlstore.ParseTime(again)
		if err != nil || !back.Equal(at.Truncate(time.Millisecond)) {
			t.Fatalf("%q read as %v, written as %q, read back as %v, %v", text, at, again, back, err)
		}
	})
}

func TestReadTime(t *testing.T) {
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, v := range []any{at, "2025-03-01T12:00:00.000Z", []byte("2025-03-01T12:00:00.000Z")} {
		if got, err := sqlstore.ReadTime(v); err != nil || !got.Equal(at) {
			t.Errorf("ReadTime(%#v) = %v, %v", v, got, err)
		}
	}
	if got, err := sqlstore.ReadTime(nil); err != nil || !got.IsZero() {
		t.Errorf("ReadTime(nil) = %v, %v", got, err)
	}
	for _, v := range []any{int64(5), "yesterday"} {
		if _, err := sqlstore.ReadTime(v); err == nil {
			t.Errorf("ReadTime(%#v) took it", v)
		}
	}
}

func TestCutError(t *testing.T) {
	if got := sqlstore.CutError("short\xff"); got != "short\uFFFD" {
		t.Errorf("CutError = %q", got)
	}
}

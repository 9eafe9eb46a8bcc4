// Package sqlite opens a SQLite database for the SQL stores through
// modernc.org/sqlite (SQLite compiled to Go: no cgo, no C toolchain), with
// the settings they share.
package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"

	_ "modernc.org/sqlite" // registers the driver "sqlite"
)

// BusyTimeoutMillis is how long a connection waits for another writer to
// the same file (another process, or another connection of the pool)
// before failing with SQLITE_BUSY.
const BusyTimeoutMillis = 10000

// Open opens the SQLite database at path: a file name, ":memory:", or a
// modernc.org/sqlite DSN ("file:..." with query parameters). Files are put
// in WAL mode, so that readers do not wait for a writer. An in-memory
// database lives in one connection (SQLite gives each connection its own),
// so the pool is held to that one.
func Open(path string) (*sql.DB, error) {
	if path == "" {
		return nil, errors.New(`SQLite needs a file name or ":memory:"`)
	}
	memory := isMemory(path)
	params := fmt.Sprintf("_pragma=busy_timeout(%d)", BusyTimeoutMillis)
	if !memory {
		params += "&_pragma=journal_mode(WAL)"
	}
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	db, err := sql.Open("sqlite", path+sep+params)
	if err != nil {
		return nil, fmt.Errorf("open SQLite database %s: %w", path, err)
	}
	if memory {
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		db.SetConnMaxLifetime(0)
		db.SetConnMaxIdleTime(0)
	}
	return db, nil
}

// isMemory reports whether path names an in-memory database, which every
// connection would have a new one of (shared-cache memory databases are
// shared, but lock whole tables without waiting, so they are held to one
// connection too).
func isMemory(path string) bool {
	return path == ":memory:" || strings.HasPrefix(path, "file::memory:") || strings.Contains(path, "mode=memory")
}

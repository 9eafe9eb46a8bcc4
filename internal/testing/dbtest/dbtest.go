// Package dbtest finds the PostgreSQL server that database tests run
// against: ACEMQ_TEST_POSTGRES_URL, which `make test` sets to the private
// server scripts/postgres.sh starts.
//
// Under CI (CI=true) a database test that cannot reach its server fails; on
// a developer machine it skips, saying how to start one.
package dbtest

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/internal/testing/reachtest"
)

// DefaultPostgresURL is the server scripts/postgres.sh starts.
const DefaultPostgresURL = "postgres://acemq@localhost:5433/acemq?sslmode=disable"

const howToStart = "start one with `make test` (or `bash scripts/postgres.sh run go test ./...`, or `bash scripts/postgres.sh` and ACEMQ_TEST_POSTGRES_URL=" + DefaultPostgresURL + ")"

// PostgresURL returns the URL of the test PostgreSQL server,
// ACEMQ_TEST_POSTGRES_URL. It skips the test (fails it under CI) when that
// is not set (no default, not even under CI: a fixed port there could be
// another checkout's server) or nothing speaking PostgreSQL answers there
// within a few seconds.
func PostgresURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("ACEMQ_TEST_POSTGRES_URL")
	if u == "" {
		reachtest.Unavailable(t, "database", "ACEMQ_TEST_POSTGRES_URL is not set, so there is no PostgreSQL to test against; "+howToStart)
	}
	if err := reachtest.Probe(u, probe); err != nil {
		reachtest.Unavailable(t, "database", fmt.Sprintf("no PostgreSQL at %s: %v; %s", reachtest.Redact(u), err, howToStart))
	}
	return u
}

// probe checks that a PostgreSQL server answers at u: it sends an
// SSLRequest, which every server answers with one byte, S or N, before any
// authentication.
func probe(u string) error {
	network, addr, err := address(u)
	if err != nil {
		return err
	}
	conn, err := net.DialTimeout(network, addr, 3*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(3 * time.Second))
	var req [8]byte
	binary.BigEndian.PutUint32(req[0:], 8)
	binary.BigEndian.PutUint32(req[4:], 80877103) // the SSLRequest code
	if _, err := conn.Write(req[:]); err != nil {
		return err
	}
	b := make([]byte, 1)
	if _, err := io.ReadFull(conn, b); err != nil {
		return fmt.Errorf("no PostgreSQL answer: %w", err)
	}
	if b[0] != 'S' && b[0] != 'N' {
		return fmt.Errorf("the server does not speak the PostgreSQL protocol")
	}
	return nil
}

// address is where a postgres:// URL points: its host and port, or the
// unix socket in the directory its host parameter names.
func address(u string) (network, addr string, err error) {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "postgres" && p.Scheme != "postgresql") {
		return "", "", fmt.Errorf("ACEMQ_TEST_POSTGRES_URL must be a postgres:// URL")
	}
	port := p.Port()
	if port == "" {
		port = p.Query().Get("port") // as libpq reads a URL too
	}
	if port == "" {
		port = "5432"
	}
	if dir := p.Query().Get("host"); strings.HasPrefix(dir, "/") {
		return "unix", filepath.Join(dir, ".s.PGSQL."+port), nil
	}
	host := p.Hostname()
	if host == "" {
		host = "localhost"
	}
	return "tcp", net.JoinHostPort(host, port), nil
}

// UniqueName returns a SQL identifier no other test (nor an earlier run on
// the same server) uses: prefix, the test's name and a random suffix, in
// lower case (PostgreSQL folds unquoted names), at most 48 bytes: a test
// may add a suffix of its own within PostgreSQL's limit of 63.
func UniqueName(t testing.TB, prefix string) string {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '_'
	}, prefix+"_"+t.Name())
	suffix := "_" + hex.EncodeToString(b[:])
	if len(name) > 48-len(suffix) {
		name = name[:48-len(suffix)]
	}
	return name + suffix
}

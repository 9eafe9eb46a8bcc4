package dbtest

import (
	"fmt"
	"net"
	"regexp"
	"strings"
	"testing"
)

func TestAddress(t *testing.T) {
	tests := []struct{ url, network, addr string }{
		{"postgres://acemq@localhost:5433/acemq?sslmode=disable", "tcp", "localhost:5433"},
		{"postgresql://u:pw@db.example/x", "tcp", "db.example:5432"},
		{"postgres:///acemq?host=/run/pg&port=5433", "unix", "/run/pg/.s.PGSQL.5433"},
		{"postgres://:5433/acemq?host=/run/pg", "unix", "/run/pg/.s.PGSQL.5433"},
	}
	for _, tt := range tests {
		network, addr, err := address(tt.url)
		if err != nil || network != tt.network || addr != tt.addr {
			t.Errorf("address(%q) = %s %s, %v; want %s %s", tt.url, network, addr, err, tt.network, tt.addr)
		}
	}
	if _, _, err := address("host=localhost port=5433"); err == nil {
		t.Error("a keyword/value string was taken for a URL")
	}
}

// server answers every connection's first bytes with reply.
func server(t *testing.T, reply string) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			b := make([]byte, 8)
			_, _ = c.Read(b)
			_, _ = c.Write([]byte(reply))
			c.Close()
		}
	}()
	return fmt.Sprintf("postgres://acemq@%s/acemq", l.Addr())
}

func TestProbe(t *testing.T) {
	if err := probe(server(t, "N")); err != nil {
		t.Errorf("a server refusing TLS (N): %v", err)
	}
	if err := probe(server(t, "S")); err != nil {
		t.Errorf("a server offering TLS (S): %v", err)
	}
	if err := probe(server(t, "AMQP")); err == nil || !strings.Contains(err.Error(), "does not speak the PostgreSQL protocol") {
		t.Errorf("an AMQP server: %v", err)
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	l.Close()
	if err := probe(fmt.Sprintf("postgres://%s/x", l.Addr())); err == nil {
		t.Error("nothing listening, and probe says it answers")
	}
}

// Under CI a server out of reach fails the test; elsewhere it skips it.
func TestPostgresURLOutOfReach(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	l.Close()
	t.Setenv("ACEMQ_TEST_POSTGRES_URL", fmt.Sprintf("postgres://acemq@%s/acemq", l.Addr()))
	for _, ci := range []string{"true", ""} {
		t.Setenv("CI", ci)
		var f fake
		func() {
			defer func() { _ = recover() }() // fake's Skip and Fatalf stop like runtime.Goexit would
			PostgresURL(&f)
		}()
		if ci == "true" && (!f.failed || f.skipped) {
			t.Errorf("CI=true: failed %v, skipped %v; want it failed", f.failed, f.skipped)
		}
		if ci == "" && (f.failed || !f.skipped) {
			t.Errorf("not CI: failed %v, skipped %v; want it skipped", f.failed, f.skipped)
		}
		if !strings.Contains(f.msg, "no PostgreSQL at") {
			t.Errorf("the message %q does not say what is missing", f.msg)
		}
	}
}

type fake struct {
	testing.TB
	failed, skipped bool
	msg             string
}

func (f *fake) Helper() {}
func (f *fake) Fatalf(format string, args ...any) {
	f.failed, f.msg = true, fmt.Sprintf(format, args...)
	panic("Fatalf")
}
func (f *fake) Skip(args ...any) {
	f.skipped, f.msg = true, fmt.Sprint(args...)
	panic("Skip")
}

func TestUniqueName(t *testing.T) {
	a, b := UniqueName(t, "acemq_schema_registry"), UniqueName(t, "acemq_schema_registry")
	if a == b {
		t.Errorf("two names alike: %s", a)
	}
	if !regexp.MustCompile(`^[a-z_][a-z0-9_]{0,47}$`).MatchString(a) {
		t.Errorf("%q is not a lower-case identifier of at most 48 bytes", a)
	}
}

// Package conntest opens the tests' connections to a broker: an
// *acemq.Conn with a connection name, that fails the test when it cannot
// connect and is closed when the test ends.
package conntest

import (
	"slices"
	"testing"

	"github.com/acemq-go/acemq"
)

// Connect connects to url as name (the connection name the broker lists),
// with opts besides, and closes the connection when t ends.
func Connect(t testing.TB, url, name string, opts ...acemq.Option) *acemq.Conn {
	t.Helper()
	conn, err := acemq.Connect(t.Context(), url, append(slices.Clip(opts), acemq.WithConnectionName(name))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

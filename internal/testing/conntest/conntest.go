// Package conntest opens the tests' connections to a broker: an
// *acemq.Conn with a connection name, that fails the test when it cannot
// connect and is closed when the test ends.
package conntest

import (
	"testing"

	"github.com/acemq-go/acemq"
)

// Connect connects to url as name (the connection name the broker lists),
// with opts besides, and closes the connection when t ends. It takes a
// Conn's options, as New does, so that a test runs the same options on
// memory:// and RabbitMQ.
func Connect(t testing.TB, url, name string, opts ...acemq.ConnOption) *acemq.Conn {
	t.Helper()
	all := []acemq.ConnectOption{acemq.WithConnectionName(name)}
	for _, o := range opts {
		all = append(all, o)
	}
	conn, err := acemq.Connect(t.Context(), url, all...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

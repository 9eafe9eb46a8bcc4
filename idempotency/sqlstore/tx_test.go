package sqlstore_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/idempotency"
	"github.com/acemq-go/acemq/idempotency/sqlstore"
)

// A caller's bad input is TxHandler's error, never a panic.
func TestTxHandlerBadInputIsAnError(t *testing.T) {
	work := func(context.Context, *sql.Tx, acemq.Message[string]) acemq.Decision { return acemq.Accept() }
	for _, c := range []struct {
		name string
		make func() (acemq.Handler[string], error)
		want string
	}{
		{"no store", func() (acemq.Handler[string], error) { return sqlstore.TxHandler(nil, work) }, "needs a store"},
		{"no handler", func() (acemq.Handler[string], error) { return sqlstore.TxHandler[string](new(sqlstore.Store), nil) }, "needs a handler"},
		{"an invalid option", func() (acemq.Handler[string], error) {
			return sqlstore.TxHandler(new(sqlstore.Store), work, idempotency.WithClaimTimeout(-1))
		}, "WithClaimTimeout"},
	} {
		if h, err := c.make(); h != nil || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: handler %v, error %v; want no handler and an error saying %q", c.name, h != nil, err, c.want)
		}
	}
}

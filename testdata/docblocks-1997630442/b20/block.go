package docblock

import "context"
import "os"

//line /work/wt/pc/docs/outbox.md:15
import (
//line /work/wt/pc/docs/outbox.md:16
	"github.com/acemq-go/acemq"
//line /work/wt/pc/docs/outbox.md:17
	"github.com/acemq-go/acemq/outbox"
//line /work/wt/pc/docs/outbox.md:18
	"github.com/acemq-go/acemq/outbox/sqlstore/postgres"
//line /work/wt/pc/docs/outbox.md:19
)

//line /work/wt/pc/docs/outbox.md:10
type Order struct{ ID string; Cents int64 }
//line /work/wt/pc/docs/outbox.md:11
var o Order


var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/outbox.md:20

//line /work/wt/pc/docs/outbox.md:21
store, err := postgres.Open(ctx, os.Getenv("DATABASE_URL")) // makes acemq_outbox
//line /work/wt/pc/docs/outbox.md:22
if err != nil {
//line /work/wt/pc/docs/outbox.md:23
	return err
//line /work/wt/pc/docs/outbox.md:24
}
//line /work/wt/pc/docs/outbox.md:25
defer store.Close()
//line /work/wt/pc/docs/outbox.md:26

//line /work/wt/pc/docs/outbox.md:27
tx, err := store.DB().BeginTx(ctx, nil)
//line /work/wt/pc/docs/outbox.md:28
// ...
//line /work/wt/pc/docs/outbox.md:29
_, err = tx.ExecContext(ctx, "INSERT INTO orders (id, cents) VALUES ($1, $2)", o.ID, o.Cents)
//line /work/wt/pc/docs/outbox.md:30
// ...
//line /work/wt/pc/docs/outbox.md:31
_, err = store.Write(ctx, tx, outbox.Message{Exchange: "orders", RoutingKey: "order.created", Body: o})
//line /work/wt/pc/docs/outbox.md:32
// ...
//line /work/wt/pc/docs/outbox.md:33
err = tx.Commit()
_ = store
_ = err
_ = tx
_ = err
return nil
}

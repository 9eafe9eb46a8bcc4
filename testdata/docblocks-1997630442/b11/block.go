package docblock

import "github.com/acemq-go/acemq"
import "context"
import "os"
import "database/sql"

//line /work/wt/pc/docs/idempotency.md:113
import "github.com/acemq-go/acemq/idempotency/sqlstore"
//line /work/wt/pc/docs/idempotency.md:114
import "github.com/acemq-go/acemq/idempotency/sqlstore/postgres"

//line /work/wt/pc/docs/idempotency.md:115
type Payment struct{ Cents int64 }


var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/idempotency.md:119
store, err := postgres.Open(ctx, os.Getenv("DATABASE_URL"))
//line /work/wt/pc/docs/idempotency.md:120
// ...
//line /work/wt/pc/docs/idempotency.md:121
consumer, err := acemq.Consume(ctx, conn, "payments",
//line /work/wt/pc/docs/idempotency.md:122
	sqlstore.TxHandler(store, func(ctx context.Context, tx *sql.Tx, m acemq.Message[Payment]) acemq.Decision {
//line /work/wt/pc/docs/idempotency.md:123
		if _, err := tx.ExecContext(ctx, "INSERT INTO ledger (payment, cents) VALUES ($1, $2)", m.Envelope.ID, m.Body.Cents); err != nil {
//line /work/wt/pc/docs/idempotency.md:124
			return acemq.Retry(err)
//line /work/wt/pc/docs/idempotency.md:125
		}
//line /work/wt/pc/docs/idempotency.md:126
		return acemq.Accept()
//line /work/wt/pc/docs/idempotency.md:127
	}))
_ = store
_ = err
_ = consumer
_ = err
return nil
}

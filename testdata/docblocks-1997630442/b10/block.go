package docblock

import "context"
import "os"

//line /work/wt/pc/docs/idempotency.md:15
import (
//line /work/wt/pc/docs/idempotency.md:16
	"github.com/acemq-go/acemq"
//line /work/wt/pc/docs/idempotency.md:17
	"github.com/acemq-go/acemq/idempotency"
//line /work/wt/pc/docs/idempotency.md:18
	"github.com/acemq-go/acemq/idempotency/sqlstore/postgres"
//line /work/wt/pc/docs/idempotency.md:19
)

//line /work/wt/pc/docs/idempotency.md:10
type Payment struct{ Cents int64 }
//line /work/wt/pc/docs/idempotency.md:11
func charge(context.Context, Payment) error { panic(0) }


var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/idempotency.md:20

//line /work/wt/pc/docs/idempotency.md:21
store, err := postgres.Open(ctx, os.Getenv("DATABASE_URL")) // makes acemq_idempotency
//line /work/wt/pc/docs/idempotency.md:22
if err != nil {
//line /work/wt/pc/docs/idempotency.md:23
	return err
//line /work/wt/pc/docs/idempotency.md:24
}
//line /work/wt/pc/docs/idempotency.md:25
defer store.Close()
//line /work/wt/pc/docs/idempotency.md:26

//line /work/wt/pc/docs/idempotency.md:27
consumer, err := acemq.Consume(ctx, conn, "payments",
//line /work/wt/pc/docs/idempotency.md:28
	idempotency.Handler(store, func(ctx context.Context, m acemq.Message[Payment]) acemq.Decision {
//line /work/wt/pc/docs/idempotency.md:29
		if err := charge(ctx, m.Body); err != nil {
//line /work/wt/pc/docs/idempotency.md:30
			return acemq.Retry(err)
//line /work/wt/pc/docs/idempotency.md:31
		}
//line /work/wt/pc/docs/idempotency.md:32
		return acemq.Accept()
//line /work/wt/pc/docs/idempotency.md:33
	}))
_ = store
_ = err
_ = consumer
_ = err
return nil
}

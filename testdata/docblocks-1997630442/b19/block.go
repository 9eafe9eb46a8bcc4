package docblock

import "github.com/acemq-go/acemq"
import "github.com/acemq-go/acemq/acemqprom"
import "context"
import "github.com/acemq-go/acemq/outbox"


//line /work/wt/pc/docs/observability.md:149
var store outbox.Store
//line /work/wt/pc/docs/observability.md:150
var m *acemqprom.Metrics


var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/observability.md:154
relay, err := outbox.NewRelay(store, conn)
//line /work/wt/pc/docs/observability.md:155
m.WatchOutbox(relay) // every relay of the process
//line /work/wt/pc/docs/observability.md:156
go relay.Run(ctx)
_ = relay
_ = err
return nil
}

package docblock

import "github.com/acemq-go/acemq"
import "context"
import "github.com/acemq-go/acemq/outbox"


//line /work/wt/pc/docs/outbox.md:41
var store outbox.Store


var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/outbox.md:45
relay, err := outbox.NewRelay(store, conn)
//line /work/wt/pc/docs/outbox.md:46
// ...
//line /work/wt/pc/docs/outbox.md:47
go relay.Run(ctx) // until ctx ends
_ = relay
_ = err
return nil
}

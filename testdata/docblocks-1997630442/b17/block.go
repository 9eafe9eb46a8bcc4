package docblock

import "github.com/acemq-go/acemq"
import "context"
import "time"
import "github.com/acemq-go/acemq/transport"




var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/memory.md:253
headers := transport.Table{
//line /work/wt/pc/docs/memory.md:254
	"x-death": []any{transport.Table{
//line /work/wt/pc/docs/memory.md:255
		"count":        int64(1),
//line /work/wt/pc/docs/memory.md:256
		"reason":       "expired", // or "rejected", "maxlen", "delivery_limit"
//line /work/wt/pc/docs/memory.md:257
		"queue":        "orders.retry.5m",
//line /work/wt/pc/docs/memory.md:258
		"time":         time.Unix(1767225600, 0), // an AMQP timestamp: whole seconds
//line /work/wt/pc/docs/memory.md:259
		"exchange":     "",                       // where it had been published
//line /work/wt/pc/docs/memory.md:260
		"routing-keys": []any{"orders.retry.5m"},
//line /work/wt/pc/docs/memory.md:261
		// "original-expiration": "60000"         // only when it had an expiration
//line /work/wt/pc/docs/memory.md:262
	}},
//line /work/wt/pc/docs/memory.md:263
	"x-first-death-exchange": "", "x-first-death-queue": "orders.retry.5m", "x-first-death-reason": "expired",
//line /work/wt/pc/docs/memory.md:264
	"x-last-death-exchange": "", "x-last-death-queue": "orders.retry.5m", "x-last-death-reason": "expired", // not on 3.10
//line /work/wt/pc/docs/memory.md:265
}
_ = headers
return nil
}

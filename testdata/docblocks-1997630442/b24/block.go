package docblock

import "github.com/acemq-go/acemq"
import "context"


//line /work/wt/pc/docs/publishing.md:3
type Order struct{ ID string; Total float64 }
//line /work/wt/pc/docs/publishing.md:4
var requestID string


var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/publishing.md:8
orders, err := acemq.NewPublisher[Order](conn, "orders", acemq.WithOrigin("checkout"))
//line /work/wt/pc/docs/publishing.md:9
if err != nil {
//line /work/wt/pc/docs/publishing.md:10
	return err // an option out of range, or not a Publisher's
//line /work/wt/pc/docs/publishing.md:11
}
//line /work/wt/pc/docs/publishing.md:12
err = orders.Publish(ctx, "order.new", Order{ID: "o-1", Total: 9.5},
//line /work/wt/pc/docs/publishing.md:13
	acemq.WithCorrelation(requestID), acemq.WithHeaders(map[string]any{"tenant": "acme"}))
_ = orders
_ = err
return nil
}

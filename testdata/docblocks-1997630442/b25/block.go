package docblock

import "github.com/acemq-go/acemq"
import "context"
import "errors"
import "log"


//line /work/wt/pc/docs/publishing.md:38
type Order struct{ ID string }
//line /work/wt/pc/docs/publishing.md:39
var orders *acemq.Publisher[Order]
//line /work/wt/pc/docs/publishing.md:40
var a, b Order


var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/publishing.md:44
err := orders.PublishBatch(ctx, []acemq.Outgoing[Order]{
//line /work/wt/pc/docs/publishing.md:45
	{RoutingKey: "order.new", Body: a},
//line /work/wt/pc/docs/publishing.md:46
	{RoutingKey: "order.new", Body: b},
//line /work/wt/pc/docs/publishing.md:47
})
//line /work/wt/pc/docs/publishing.md:48
var be *acemq.BatchError
//line /work/wt/pc/docs/publishing.md:49
if errors.As(err, &be) {
//line /work/wt/pc/docs/publishing.md:50
	for _, f := range be.Failed {
//line /work/wt/pc/docs/publishing.md:51
		log.Printf("message %d (%s) not published: %v", f.Index, f.Err.MessageID, f.Err)
//line /work/wt/pc/docs/publishing.md:52
	}
//line /work/wt/pc/docs/publishing.md:53
}
_ = err
_ = be
return nil
}

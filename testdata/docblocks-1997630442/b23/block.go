package docblock

import "github.com/acemq-go/acemq"
import "context"
import "errors"
import "github.com/acemq-go/acemq/pipeline"
import "time"


//line /work/wt/pc/docs/pipelines.md:11
var prices interface{ Lookup(context.Context, any) (int, error) }


var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/pipelines.md:15
type Order struct {
//line /work/wt/pc/docs/pipelines.md:16
	ID    string `json:"id"`
//line /work/wt/pc/docs/pipelines.md:17
	Qty   int    `json:"qty"`
//line /work/wt/pc/docs/pipelines.md:18
	Cents int    `json:"cents,omitempty"`
//line /work/wt/pc/docs/pipelines.md:19
}
//line /work/wt/pc/docs/pipelines.md:20

//line /work/wt/pc/docs/pipelines.md:21
orders := pipeline.Pipeline{Name: "orders", Steps: []string{"validate", "price", "store"}}
//line /work/wt/pc/docs/pipelines.md:22
if err := orders.Declare(ctx, conn); err != nil { // exchange orders, queues orders.validate, .price, .store
//line /work/wt/pc/docs/pipelines.md:23
	return err
//line /work/wt/pc/docs/pipelines.md:24
}
//line /work/wt/pc/docs/pipelines.md:25

//line /work/wt/pc/docs/pipelines.md:26
// Each step: a handler that returns the next body, ends the run, or fails.
//line /work/wt/pc/docs/pipelines.md:27
validate, err := pipeline.Run(ctx, conn, orders, "validate",
//line /work/wt/pc/docs/pipelines.md:28
	func(ctx context.Context, m acemq.Message[Order]) pipeline.Result {
//line /work/wt/pc/docs/pipelines.md:29
		if m.Body.Qty <= 0 {
//line /work/wt/pc/docs/pipelines.md:30
			return pipeline.Fail(acemq.Reject(errors.New("quantity is not positive")))
//line /work/wt/pc/docs/pipelines.md:31
		}
//line /work/wt/pc/docs/pipelines.md:32
		return pipeline.Next(m.Body)
//line /work/wt/pc/docs/pipelines.md:33
	})
//line /work/wt/pc/docs/pipelines.md:34
price, err := pipeline.Run(ctx, conn, orders, "price",
//line /work/wt/pc/docs/pipelines.md:35
	func(ctx context.Context, m acemq.Message[Order]) pipeline.Result {
//line /work/wt/pc/docs/pipelines.md:36
		cents, err := prices.Lookup(ctx, m.Body)
//line /work/wt/pc/docs/pipelines.md:37
		if err != nil {
//line /work/wt/pc/docs/pipelines.md:38
			return pipeline.Fail(acemq.Retry(err)) // up this step's own ladder
//line /work/wt/pc/docs/pipelines.md:39
		}
//line /work/wt/pc/docs/pipelines.md:40
		m.Body.Cents = cents
//line /work/wt/pc/docs/pipelines.md:41
		return pipeline.Next(m.Body)
//line /work/wt/pc/docs/pipelines.md:42
	},
//line /work/wt/pc/docs/pipelines.md:43
	acemq.WithPolicy(acemq.Exponential(5, 10*time.Second, 5*time.Minute)))
//line /work/wt/pc/docs/pipelines.md:44
// ... store likewise; its Next ends the run, complete.
//line /work/wt/pc/docs/pipelines.md:45

//line /work/wt/pc/docs/pipelines.md:46
// A run: the body into the first step, with a new slip.
//line /work/wt/pc/docs/pipelines.md:47
err = orders.Start(ctx, conn, Order{ID: "order-1", Qty: 2}, acemq.WithMessageID("order-1"))
_ = orders
_ = validate
_ = err
_ = price
_ = err
return nil
}

package docblock

import "github.com/acemq-go/acemq"
import "context"
import "errors"
import "fmt"
import "github.com/acemq-go/acemq/request"


//line /work/wt/pc/docs/request-reply.md:10
type Quote struct{ SKU string; Qty int }
//line /work/wt/pc/docs/request-reply.md:11
type Price struct{ SKU string; Cents int }


var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/request-reply.md:15
// The responder: a handler from the request to its answer.
//line /work/wt/pc/docs/request-reply.md:16
responder, err := request.Serve(ctx, conn, "quotes",
//line /work/wt/pc/docs/request-reply.md:17
	func(ctx context.Context, m acemq.Message[Quote]) (Price, error) {
//line /work/wt/pc/docs/request-reply.md:18
		if m.Body.Qty <= 0 {
//line /work/wt/pc/docs/request-reply.md:19
			return Price{}, fmt.Errorf("quantity %d is not positive", m.Body.Qty)
//line /work/wt/pc/docs/request-reply.md:20
		}
//line /work/wt/pc/docs/request-reply.md:21
		return Price{SKU: m.Body.SKU, Cents: 250 * m.Body.Qty}, nil
//line /work/wt/pc/docs/request-reply.md:22
	},
//line /work/wt/pc/docs/request-reply.md:23
	request.WithConsumeOptions(acemq.WithConcurrency(4)))
//line /work/wt/pc/docs/request-reply.md:24
if err != nil {
//line /work/wt/pc/docs/request-reply.md:25
	return err
//line /work/wt/pc/docs/request-reply.md:26
}
//line /work/wt/pc/docs/request-reply.md:27
defer responder.Close(ctx)
//line /work/wt/pc/docs/request-reply.md:28

//line /work/wt/pc/docs/request-reply.md:29
// The requester: one client (one reply queue) for many requests at once.
//line /work/wt/pc/docs/request-reply.md:30
client, err := request.NewClient(ctx, conn)
//line /work/wt/pc/docs/request-reply.md:31
if err != nil {
//line /work/wt/pc/docs/request-reply.md:32
	return err
//line /work/wt/pc/docs/request-reply.md:33
}
//line /work/wt/pc/docs/request-reply.md:34
defer client.Close(ctx)
//line /work/wt/pc/docs/request-reply.md:35

//line /work/wt/pc/docs/request-reply.md:36
price, err := request.Do[Quote, Price](ctx, client, "", "quotes", Quote{SKU: "sku-1", Qty: 4})
//line /work/wt/pc/docs/request-reply.md:37
var failed *request.ResponderError
//line /work/wt/pc/docs/request-reply.md:38
switch {
//line /work/wt/pc/docs/request-reply.md:39
case errors.As(err, &failed):
//line /work/wt/pc/docs/request-reply.md:40
	// The responder's handler returned an error: failed.Message.
//line /work/wt/pc/docs/request-reply.md:41
case errors.Is(err, acemq.ErrTimeout):
//line /work/wt/pc/docs/request-reply.md:42
	// No reply in time. The request may still be handled: send it again
//line /work/wt/pc/docs/request-reply.md:43
	// only if the responder is idempotent.
//line /work/wt/pc/docs/request-reply.md:44
case errors.Is(err, acemq.ErrUnroutable):
//line /work/wt/pc/docs/request-reply.md:45
	// No queue takes requests under that routing key.
//line /work/wt/pc/docs/request-reply.md:46
}
_ = responder
_ = err
_ = client
_ = err
_ = price
_ = err
_ = failed
return nil
}

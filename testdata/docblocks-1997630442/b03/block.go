package docblock

import "github.com/acemq-go/acemq"
import "context"
import "errors"


//line /work/wt/pc/docs/consuming.md:3
func charge(context.Context, any) error { panic(0) }
//line /work/wt/pc/docs/consuming.md:4
var errCardDeclined error


var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/consuming.md:8
type Order struct {
//line /work/wt/pc/docs/consuming.md:9
	ID    string  `json:"id"`
//line /work/wt/pc/docs/consuming.md:10
	Total float64 `json:"total"`
//line /work/wt/pc/docs/consuming.md:11
}
//line /work/wt/pc/docs/consuming.md:12

//line /work/wt/pc/docs/consuming.md:13
policy, _ := acemq.ParsePolicy("exponential(6, 10s, 5m)")
//line /work/wt/pc/docs/consuming.md:14
consumer, err := acemq.Consume(ctx, conn, "orders.new",
//line /work/wt/pc/docs/consuming.md:15
	func(ctx context.Context, m acemq.Message[Order]) acemq.Decision {
//line /work/wt/pc/docs/consuming.md:16
		switch err := charge(ctx, m.Body); {
//line /work/wt/pc/docs/consuming.md:17
		case err == nil:
//line /work/wt/pc/docs/consuming.md:18
			return acemq.Accept()
//line /work/wt/pc/docs/consuming.md:19
		case errors.Is(err, errCardDeclined):
//line /work/wt/pc/docs/consuming.md:20
			return acemq.Reject(err) // will never succeed: Q.dlq
//line /work/wt/pc/docs/consuming.md:21
		default:
//line /work/wt/pc/docs/consuming.md:22
			return acemq.Retry(err) // the policy decides when, or gives up
//line /work/wt/pc/docs/consuming.md:23
		}
//line /work/wt/pc/docs/consuming.md:24
	},
//line /work/wt/pc/docs/consuming.md:25
	acemq.WithPolicy(policy), acemq.WithConcurrency(8), acemq.WithPrefetch(50))
//line /work/wt/pc/docs/consuming.md:26
if err != nil {
//line /work/wt/pc/docs/consuming.md:27
	return err
//line /work/wt/pc/docs/consuming.md:28
}
//line /work/wt/pc/docs/consuming.md:29
defer consumer.Close(context.Background())
_ = policy
_ = consumer
_ = err
return nil
}

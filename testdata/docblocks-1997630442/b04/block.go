package docblock

import "github.com/acemq-go/acemq"
import "context"
import "fmt"


//line /work/wt/pc/docs/consuming.md:91
func handle(context.Context, acemq.Message[any]) acemq.Decision { panic(0) }
//line /work/wt/pc/docs/consuming.md:92
var region string


var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/consuming.md:96
consumer, err := acemq.Consume(ctx, conn, "orders.new", handle,
//line /work/wt/pc/docs/consuming.md:97
	acemq.WithConsumeInterceptors(func(_ context.Context, m *acemq.Intercepted) error {
//line /work/wt/pc/docs/consuming.md:98
		if m.Headers["region"] != region {
//line /work/wt/pc/docs/consuming.md:99
			return acemq.Fatal(fmt.Errorf("region %v is not served here", m.Headers["region"]))
//line /work/wt/pc/docs/consuming.md:100
		}
//line /work/wt/pc/docs/consuming.md:101
		return nil
//line /work/wt/pc/docs/consuming.md:102
	}))
_ = consumer
_ = err
return nil
}

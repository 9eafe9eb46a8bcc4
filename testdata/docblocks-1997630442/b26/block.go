package docblock

import "github.com/acemq-go/acemq"
import "context"


//line /work/wt/pc/docs/publishing.md:86
type Order struct{ ID string }
//line /work/wt/pc/docs/publishing.md:87
var region string


var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/publishing.md:91
orders, err := acemq.NewPublisher[Order](conn, "orders",
//line /work/wt/pc/docs/publishing.md:92
	acemq.WithPublishInterceptors(func(_ context.Context, m *acemq.Intercepted) error {
//line /work/wt/pc/docs/publishing.md:93
		m.Headers["region"] = region
//line /work/wt/pc/docs/publishing.md:94
		return nil
//line /work/wt/pc/docs/publishing.md:95
	}))
_ = orders
_ = err
return nil
}

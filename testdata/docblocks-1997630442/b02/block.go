package docblock

import "github.com/acemq-go/acemq"
import "context"


//line /work/wt/pc/docs/connecting.md:101
var creds acemq.Credentials


var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/connecting.md:105
conn, err := acemq.Connect(ctx, "amqp://svc@rabbit-1:5672/orders",
//line /work/wt/pc/docs/connecting.md:106
	acemq.WithFallbackURLs("amqp://svc@rabbit-2:5672/orders", "amqp://svc@rabbit-3:5672/orders"),
//line /work/wt/pc/docs/connecting.md:107
	acemq.WithCredentials(creds))
_ = conn
_ = err
return nil
}

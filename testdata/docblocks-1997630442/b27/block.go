package docblock

import "github.com/acemq-go/acemq"
import "context"
import "github.com/acemq-go/acemq/transport"


//line /work/wt/pc/docs/publishing.md:104
var exchange, routingKey string
//line /work/wt/pc/docs/publishing.md:105
var msg transport.Message


var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/publishing.md:109
p, err := conn.Publish(ctx, exchange, routingKey, msg) // msg is a transport.Message
//line /work/wt/pc/docs/publishing.md:110
if err != nil {
//line /work/wt/pc/docs/publishing.md:111
	return err // not sent: the broker blocked publishing until ctx ended, say
//line /work/wt/pc/docs/publishing.md:112
}
//line /work/wt/pc/docs/publishing.md:113
err = p.Wait(ctx) // the broker's answer: nil once confirmed, else the errors above
_ = p
_ = err
return nil
}

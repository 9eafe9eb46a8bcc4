package docblock

import "github.com/acemq-go/acemq"
import "github.com/acemq-go/acemq/acemqtest"
import "context"
import "github.com/acemq-go/acemq/transport/memory"
import "testing"


//line /work/wt/pc/docs/memory.md:43
var t *testing.T


var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/memory.md:47
b := memory.NewBroker(memory.WithRabbitMQVersion("4.0"))    // or "4.0.5", "4"; "3.10", "3.10.8"; "4.3", "4.3.6"
//line /work/wt/pc/docs/memory.md:48
tr, _ := memory.Dial(ctx, "memory://orders-test?rabbitmq=3.10")
//line /work/wt/pc/docs/memory.md:49
broker := acemqtest.NewBroker(t, memory.WithRabbitMQVersion("4.0"))
_ = b
_ = tr
_ = broker
return nil
}

package docblock

import "github.com/acemq-go/acemq"
import "context"
import "github.com/acemq-go/acemq/contract"
import "log"
import "time"


//line /work/wt/pc/docs/topology.md:64
func handle(context.Context, acemq.Message[any]) acemq.Decision { panic(0) }


var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/topology.md:68
retry := acemq.Exponential(6, 10*time.Second, 5*time.Minute)
//line /work/wt/pc/docs/topology.md:69
top := acemq.Topology{
//line /work/wt/pc/docs/topology.md:70
	Exchanges: []acemq.ExchangeSpec{{Name: "orders", Type: "topic"}},
//line /work/wt/pc/docs/topology.md:71
	Queues: []acemq.QueueSpec{{
//line /work/wt/pc/docs/topology.md:72
		Name:       "orders.new", // quorum and durable: the defaults
//line /work/wt/pc/docs/topology.md:73
		DeadLetter: true,         // orders.new.dlq and orders.new.parked
//line /work/wt/pc/docs/topology.md:74
		Retry:      &retry,       // its retry ladder
//line /work/wt/pc/docs/topology.md:75
		Rungs:      contract.AtLeastOnceRungs,
//line /work/wt/pc/docs/topology.md:76
		Bindings:   []acemq.BindingSpec{{Exchange: "orders", RoutingKey: "order.*"}},
//line /work/wt/pc/docs/topology.md:77
	}},
//line /work/wt/pc/docs/topology.md:78
}
//line /work/wt/pc/docs/topology.md:79
for _, w := range top.Warnings() {
//line /work/wt/pc/docs/topology.md:80
	log.Print(w) // validates, but can lose messages
//line /work/wt/pc/docs/topology.md:81
}
//line /work/wt/pc/docs/topology.md:82

//line /work/wt/pc/docs/topology.md:83
conn, err := acemq.Connect(ctx, "amqp://guest:guest@localhost:5672/")
//line /work/wt/pc/docs/topology.md:84
if err != nil {
//line /work/wt/pc/docs/topology.md:85
	return err
//line /work/wt/pc/docs/topology.md:86
}
//line /work/wt/pc/docs/topology.md:87
defer conn.Close()
//line /work/wt/pc/docs/topology.md:88
// Validates first (a *acemq.ValidationError lists every problem), then
//line /work/wt/pc/docs/topology.md:89
// declares the plan in order, stopping at the first declaration refused.
//line /work/wt/pc/docs/topology.md:90
if err := top.Apply(ctx, conn); err != nil {
//line /work/wt/pc/docs/topology.md:91
	return err
//line /work/wt/pc/docs/topology.md:92
}
//line /work/wt/pc/docs/topology.md:93

//line /work/wt/pc/docs/topology.md:94
// The queue's consumers use the same policy and the same kind of rungs.
//line /work/wt/pc/docs/topology.md:95
consumer, err := acemq.Consume(ctx, conn, "orders.new", handle,
//line /work/wt/pc/docs/topology.md:96
	acemq.WithPolicy(retry), acemq.WithRungs(contract.AtLeastOnceRungs))
//line /work/wt/pc/docs/topology.md:97
if err != nil {
//line /work/wt/pc/docs/topology.md:98
	return err
//line /work/wt/pc/docs/topology.md:99
}
//line /work/wt/pc/docs/topology.md:100
defer consumer.Close(context.Background())
_ = retry
_ = top
_ = conn
_ = err
_ = consumer
_ = err
return nil
}

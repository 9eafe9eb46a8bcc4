package docblock

import "github.com/acemq-go/acemq"
import "context"
import "github.com/acemq-go/acemq/partition"
import "time"


//line /work/wt/pc/docs/partitions.md:10
type Order struct{ Customer string }
//line /work/wt/pc/docs/partitions.md:11
var order Order
//line /work/wt/pc/docs/partitions.md:12
func ship(context.Context, Order) error { panic(0) }


var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/partitions.md:16
set := partition.Set{Name: "orders"} // 8 partitions, as Java
//line /work/wt/pc/docs/partitions.md:17
if err := set.Declare(ctx, conn); err != nil { // exchange orders, queues orders.p0 ... orders.p7
//line /work/wt/pc/docs/partitions.md:18
	return err
//line /work/wt/pc/docs/partitions.md:19
}
//line /work/wt/pc/docs/partitions.md:20

//line /work/wt/pc/docs/partitions.md:21
// Publish: each order to its customer's partition (routing key p<k>).
//line /work/wt/pc/docs/partitions.md:22
pub, err := partition.NewPublisher[Order](conn, set)
//line /work/wt/pc/docs/partitions.md:23
if err != nil {
//line /work/wt/pc/docs/partitions.md:24
	return err
//line /work/wt/pc/docs/partitions.md:25
}
//line /work/wt/pc/docs/partitions.md:26
err = pub.Publish(ctx, order.Customer, order)
//line /work/wt/pc/docs/partitions.md:27

//line /work/wt/pc/docs/partitions.md:28
// Consume: this instance is member 0 of 2 and takes partitions 0, 2, 4, 6,
//line /work/wt/pc/docs/partitions.md:29
// each one message at a time. A failure is tried again in place, holding
//line /work/wt/pc/docs/partitions.md:30
// its partition; when the policy gives up it goes to orders.p<k>.dlq and
//line /work/wt/pc/docs/partitions.md:31
// the partition goes on.
//line /work/wt/pc/docs/partitions.md:32
ks, err := set.Assigned(0, 2)
//line /work/wt/pc/docs/partitions.md:33
if err != nil {
//line /work/wt/pc/docs/partitions.md:34
	return err
//line /work/wt/pc/docs/partitions.md:35
}
//line /work/wt/pc/docs/partitions.md:36
consumers, err := partition.Consume(ctx, conn, set,
//line /work/wt/pc/docs/partitions.md:37
	func(ctx context.Context, m acemq.Message[Order]) error {
//line /work/wt/pc/docs/partitions.md:38
		return ship(ctx, m.Body) // nil: done; an error: tried again; acemq.Fatal(err): dead-lettered at once
//line /work/wt/pc/docs/partitions.md:39
	},
//line /work/wt/pc/docs/partitions.md:40
	partition.Ordering{Partitions: ks, Policy: acemq.Fixed(3, time.Second)})
//line /work/wt/pc/docs/partitions.md:41
if err != nil {
//line /work/wt/pc/docs/partitions.md:42
	return err
//line /work/wt/pc/docs/partitions.md:43
}
//line /work/wt/pc/docs/partitions.md:44
defer consumers.Close(ctx)
_ = set
_ = pub
_ = err
_ = ks
_ = err
_ = consumers
_ = err
return nil
}

package docblock

import "github.com/acemq-go/acemq"
import "context"
import "github.com/acemq-go/acemq/schedule"
import "time"


//line /work/wt/pc/docs/scheduling.md:12
type Reminder struct{ Order string }
//line /work/wt/pc/docs/scheduling.md:13
type Report struct{}


var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/scheduling.md:17
// Declares acemq.schedule, its five rungs and acemq.schedule.due.
//line /work/wt/pc/docs/scheduling.md:18
sched, err := schedule.New(ctx, conn)
//line /work/wt/pc/docs/scheduling.md:19
if err != nil {
//line /work/wt/pc/docs/scheduling.md:20
	return err
//line /work/wt/pc/docs/scheduling.md:21
}
//line /work/wt/pc/docs/scheduling.md:22

//line /work/wt/pc/docs/scheduling.md:23
// One call: returns once the broker has confirmed the message on its
//line /work/wt/pc/docs/scheduling.md:24
// first rung.
//line /work/wt/pc/docs/scheduling.md:25
err = sched.PublishIn(ctx, 10*time.Minute, "orders", "order.remind", Reminder{Order: "o-1"})
//line /work/wt/pc/docs/scheduling.md:26
err = sched.PublishAt(ctx, time.Date(2027, 1, 4, 9, 0, 0, 0, time.UTC), "", "reports", Report{})
//line /work/wt/pc/docs/scheduling.md:27

//line /work/wt/pc/docs/scheduling.md:28
// The forwarder, in one process or several: an ordinary acemq consumer of
//line /work/wt/pc/docs/scheduling.md:29
// acemq.schedule.due.
//line /work/wt/pc/docs/scheduling.md:30
fwd, err := sched.Forward(ctx)
//line /work/wt/pc/docs/scheduling.md:31
if err != nil {
//line /work/wt/pc/docs/scheduling.md:32
	return err
//line /work/wt/pc/docs/scheduling.md:33
}
//line /work/wt/pc/docs/scheduling.md:34
defer fwd.Close(ctx)
_ = sched
_ = err
_ = fwd
_ = err
return nil
}

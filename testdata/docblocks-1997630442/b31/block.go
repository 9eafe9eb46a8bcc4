package docblock

import "github.com/acemq-go/acemq"
import "github.com/acemq-go/acemq/acemqtest"
import "context"
import "github.com/acemq-go/acemq/schedule"
import "testing"
import "time"


//line /work/wt/pc/docs/scheduling.md:103
var t *testing.T
//line /work/wt/pc/docs/scheduling.md:104
type Reminder struct{ Order string }


var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/scheduling.md:108
b := acemqtest.NewBroker(t)
//line /work/wt/pc/docs/scheduling.md:109
conn := b.Connect(t)
//line /work/wt/pc/docs/scheduling.md:110
sched, err := schedule.New(ctx, conn, schedule.WithClock(b.Clock))
//line /work/wt/pc/docs/scheduling.md:111
// ...
//line /work/wt/pc/docs/scheduling.md:112
sched.PublishIn(ctx, 90*time.Second, "", "reminders", Reminder{Order: "o-1"})
//line /work/wt/pc/docs/scheduling.md:113
b.Advance(time.Minute) // acemq.schedule.1m expires; the forwarder sends it to .10s
_ = b
_ = conn
_ = sched
_ = err
return nil
}

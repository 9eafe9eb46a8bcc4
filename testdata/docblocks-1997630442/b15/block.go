package docblock

import "github.com/acemq-go/acemq"
import "context"
import "github.com/acemq-go/acemq/transport/memory"
import "time"




var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/memory.md:90
clock := memory.NewManualClock(time.Now())
//line /work/wt/pc/docs/memory.md:91
b := memory.NewBroker(memory.WithClock(clock))
//line /work/wt/pc/docs/memory.md:92
defer b.Close()
//line /work/wt/pc/docs/memory.md:93

//line /work/wt/pc/docs/memory.md:94
conn, _ := acemq.New(b.Connect(), acemq.WithClock(clock))
//line /work/wt/pc/docs/memory.md:95
// ... publish a message that fails and goes to the 5-minute rung ...
//line /work/wt/pc/docs/memory.md:96
clock.Advance(5 * time.Minute) // the rung expires now; the message is home
_ = clock
_ = b
_ = conn
return nil
}

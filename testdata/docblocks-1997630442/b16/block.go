package docblock

import "github.com/acemq-go/acemq"
import "context"
import "github.com/acemq-go/acemq/transport/memory"
import "time"
import "github.com/acemq-go/acemq/transport"


//line /work/wt/pc/docs/memory.md:225
func send(queue string, m transport.Message) { panic(0) }
//line /work/wt/pc/docs/memory.md:226
var q string
//line /work/wt/pc/docs/memory.md:227
var clock *memory.ManualClock


var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/memory.md:231
send(q, transport.Message{Body: []byte("ten minutes"), Expiration: "600000"})
//line /work/wt/pc/docs/memory.md:232
send(q, transport.Message{Body: []byte("one second"), Expiration: "1000"})
//line /work/wt/pc/docs/memory.md:233
clock.Advance(time.Second)      // InspectQueue: 2 ready; nothing dead-lettered
//line /work/wt/pc/docs/memory.md:234
clock.Advance(10 * time.Minute) // both dead-lettered now, the long one first
return nil
}

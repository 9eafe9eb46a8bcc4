package docblock

import "github.com/acemq-go/acemq"
import "github.com/acemq-go/acemq/acemqtest"
import "context"
import "github.com/acemq-go/acemq/contract"
import "testing"
import "time"


//line /work/wt/pc/docs/testing.md:5
var consumer *acemq.Consumer

//line /work/wt/pc/docs/testing.md:9
func TestCheckout(t *testing.T) {
//line /work/wt/pc/docs/testing.md:10
	b := acemqtest.NewBroker(t) // a fresh memory:// broker, on a clock the test moves
//line /work/wt/pc/docs/testing.md:11
	conn := b.Connect(t)
//line /work/wt/pc/docs/testing.md:12
	// declare, publish and consume as in production ...
//line /work/wt/pc/docs/testing.md:13
	acemqtest.WaitFor(t, consumer, "the retry", func(s acemq.Stats) bool { return s.RetriedOnRung == 1 })
//line /work/wt/pc/docs/testing.md:14
	b.Advance(5 * time.Minute) // the five-minute rung expires now
//line /work/wt/pc/docs/testing.md:15
	acemqtest.WaitFor(t, consumer, "the accept", func(s acemq.Stats) bool { return s.Accepted == 1 })
//line /work/wt/pc/docs/testing.md:16
	dead := b.Messages(t, contract.DeadLetterQueue("orders")) // with their envelopes, left in place
//line /work/wt/pc/docs/testing.md:17
_ = b
_ = conn
_ = dead
}

var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
return nil
}

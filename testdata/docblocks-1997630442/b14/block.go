package docblock

import "github.com/acemq-go/acemq"
import "context"
import "github.com/acemq-go/acemq/transport/memory"




var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/memory.md:75
b := memory.NewBroker() // a broker of its own, reachable only through b
//line /work/wt/pc/docs/memory.md:76
conn, err := acemq.New(b.Connect())
//line /work/wt/pc/docs/memory.md:77

//line /work/wt/pc/docs/memory.md:78
// Or by name, as the acemq command's --url does: memory://orders-test is
//line /work/wt/pc/docs/memory.md:79
// created on first use (on real time) and shared by every Dial of that
//line /work/wt/pc/docs/memory.md:80
// name in the process.
//line /work/wt/pc/docs/memory.md:81
tr, err := memory.Dial(ctx, "memory://orders-test")
//line /work/wt/pc/docs/memory.md:82
conn, err = acemq.New(tr)
_ = b
_ = conn
_ = err
_ = tr
_ = err
return nil
}

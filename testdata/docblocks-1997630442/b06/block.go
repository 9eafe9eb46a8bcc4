package docblock

import "github.com/acemq-go/acemq"
import "context"
import "log"
import "github.com/acemq-go/acemq/codec/protobuf"

//line /work/wt/pc/docs/formats.md:94
import pb "github.com/acemq-go/acemq/internal/testing/testpb"



var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/formats.md:98
// pb is your generated package.
//line /work/wt/pc/docs/formats.md:99
consumer, err := acemq.Consume(ctx, conn, "orders.pb",
//line /work/wt/pc/docs/formats.md:100
	func(ctx context.Context, m acemq.Message[*pb.OrderPlaced]) acemq.Decision {
//line /work/wt/pc/docs/formats.md:101
		log.Println(m.Body.GetOrderId())
//line /work/wt/pc/docs/formats.md:102
		return acemq.Accept()
//line /work/wt/pc/docs/formats.md:103
	}, acemq.WithCodec(protobuf.Codec))
_ = consumer
_ = err
return nil
}

package docblock

import "github.com/acemq-go/acemq"
import "context"
import "github.com/acemq-go/acemq/encryption"


//line /work/wt/pc/docs/formats.md:154
type Order struct{ ID string }
//line /work/wt/pc/docs/formats.md:155
func handle(context.Context, acemq.Message[Order]) acemq.Decision { panic(0) }


var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/formats.md:159
// ORDERS_KEYS="2025-06 Hx4d...=; 2026-01 AAEC...= current"
//line /work/wt/pc/docs/formats.md:160
keyring, err := encryption.FromEnv("ORDERS_KEYS") // or encryption.LoadFile(path)
//line /work/wt/pc/docs/formats.md:161
if err != nil {
//line /work/wt/pc/docs/formats.md:162
	return err
//line /work/wt/pc/docs/formats.md:163
}
//line /work/wt/pc/docs/formats.md:164
codec := acemq.WithCodec(encryption.Codec(keyring, acemq.JSON))
//line /work/wt/pc/docs/formats.md:165
orders, err := acemq.NewPublisher[Order](conn, "orders", codec)
//line /work/wt/pc/docs/formats.md:166
consumer, err := acemq.Consume(ctx, conn, "orders.new", handle, codec)
_ = keyring
_ = err
_ = codec
_ = orders
_ = err
_ = consumer
_ = err
return nil
}

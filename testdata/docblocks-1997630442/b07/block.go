package docblock

import "github.com/acemq-go/acemq"
import "github.com/acemq-go/acemq/codec/avro"
import "context"

//line /work/wt/pc/docs/formats.md:119
import "github.com/acemq-go/acemq/schemaregistry/sqlregistry/sqlite"

//line /work/wt/pc/docs/formats.md:120
type Order struct{ ID string }
//line /work/wt/pc/docs/formats.md:121
var orderSchema string


var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/formats.md:125
reg, err := sqlite.Open(ctx, "/var/lib/orders/schemas.db") // or postgres.Open(ctx, url)
//line /work/wt/pc/docs/formats.md:126
if err != nil {
//line /work/wt/pc/docs/formats.md:127
	return err
//line /work/wt/pc/docs/formats.md:128
}
//line /work/wt/pc/docs/formats.md:129
defer reg.Close()
//line /work/wt/pc/docs/formats.md:130
codec, err := avro.Registered(orderSchema, reg) // orderSchema: the schema's JSON
//line /work/wt/pc/docs/formats.md:131
if err != nil {
//line /work/wt/pc/docs/formats.md:132
	return err
//line /work/wt/pc/docs/formats.md:133
}
//line /work/wt/pc/docs/formats.md:134
orders, err := acemq.NewPublisher[Order](conn, "orders", acemq.WithCodec(codec))
_ = reg
_ = err
_ = codec
_ = err
_ = orders
_ = err
return nil
}

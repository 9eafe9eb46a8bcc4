package docblock

import "context"

//line /work/wt/pc/docs/formats.md:57
import (
//line /work/wt/pc/docs/formats.md:58
	"github.com/acemq-go/acemq"
//line /work/wt/pc/docs/formats.md:59
	"github.com/acemq-go/acemq/codec/toml"
//line /work/wt/pc/docs/formats.md:60
	"github.com/acemq-go/acemq/codec/xml"
//line /work/wt/pc/docs/formats.md:61
	"github.com/acemq-go/acemq/codec/yaml"
//line /work/wt/pc/docs/formats.md:62
)

//line /work/wt/pc/docs/formats.md:53
func handle(context.Context, acemq.Message[any]) acemq.Decision { panic(0) }


var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/formats.md:63

//line /work/wt/pc/docs/formats.md:64
type OrderPlaced struct {
//line /work/wt/pc/docs/formats.md:65
	OrderID string `json:"orderId" yaml:"orderId" toml:"orderId" xml:"orderId"`
//line /work/wt/pc/docs/formats.md:66
	Total   int64  `json:"totalCents" yaml:"totalCents" toml:"totalCents" xml:"totalCents"`
//line /work/wt/pc/docs/formats.md:67
}
//line /work/wt/pc/docs/formats.md:68

//line /work/wt/pc/docs/formats.md:69
// Publish as YAML.
//line /work/wt/pc/docs/formats.md:70
orders, err := acemq.NewPublisher[OrderPlaced](conn, "orders", acemq.WithCodec(yaml.Codec))
//line /work/wt/pc/docs/formats.md:71

//line /work/wt/pc/docs/formats.md:72
// Consume YAML, TOML, XML or JSON, whichever a message says it is.
//line /work/wt/pc/docs/formats.md:73
consumer, err := acemq.Consume(ctx, conn, "orders.new", handle,
//line /work/wt/pc/docs/formats.md:74
	acemq.WithCodec(acemq.Codecs(yaml.Codec, toml.Codec, xml.Codec, acemq.JSON)))
_ = orders
_ = err
_ = consumer
_ = err
return nil
}

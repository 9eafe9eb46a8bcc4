package docblock

import "github.com/acemq-go/acemq"
import "github.com/acemq-go/acemq/claimcheck"
import "context"
import "time"


//line /work/wt/pc/docs/formats.md:184
type Report struct{ Lines []string }
//line /work/wt/pc/docs/formats.md:185
func handle(context.Context, acemq.Message[Report]) acemq.Decision { panic(0) }


var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/formats.md:189
store, err := claimcheck.NewDir("/var/lib/billing/claims") // an existing directory
//line /work/wt/pc/docs/formats.md:190
if err != nil {
//line /work/wt/pc/docs/formats.md:191
	return err
//line /work/wt/pc/docs/formats.md:192
}
//line /work/wt/pc/docs/formats.md:193
codec, err := claimcheck.New(acemq.JSON, store) // payloads of 64 KiB and more go to the store
//line /work/wt/pc/docs/formats.md:194
if err != nil {
//line /work/wt/pc/docs/formats.md:195
	return err
//line /work/wt/pc/docs/formats.md:196
}
//line /work/wt/pc/docs/formats.md:197
reports, err := acemq.NewPublisher[Report](conn, "", acemq.WithCodec(codec))
//line /work/wt/pc/docs/formats.md:198
consumer, err := acemq.Consume(ctx, conn, "reports", handle, acemq.WithCodec(codec),
//line /work/wt/pc/docs/formats.md:199
	acemq.WithPolicy(acemq.Exponential(5, time.Second, time.Minute)))
_ = store
_ = err
_ = codec
_ = err
_ = reports
_ = err
_ = consumer
_ = err
return nil
}

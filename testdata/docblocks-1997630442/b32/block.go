package docblock

import "github.com/acemq-go/acemq"
import "context"
import "github.com/acemq-go/acemq/stream"
import "time"


//line /work/wt/pc/docs/streams.md:8
type Event struct{ N int }
//line /work/wt/pc/docs/streams.md:9
func project(context.Context, int64, Event) error { panic(0) }


var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/streams.md:13
// A week's retention (x-max-age 7D), at most 1 GiB.
//line /work/wt/pc/docs/streams.md:14
spec := stream.Spec{Name: "events", MaxAge: 7 * 24 * time.Hour, MaxLengthBytes: 1 << 30}
//line /work/wt/pc/docs/streams.md:15
if err := spec.Declare(ctx, conn); err != nil {
//line /work/wt/pc/docs/streams.md:16
	return err
//line /work/wt/pc/docs/streams.md:17
}
//line /work/wt/pc/docs/streams.md:18

//line /work/wt/pc/docs/streams.md:19
// Publish as to any queue: the default exchange, the stream's name.
//line /work/wt/pc/docs/streams.md:20
pub, err := acemq.NewPublisher[Event](conn, "")
//line /work/wt/pc/docs/streams.md:21
if err != nil {
//line /work/wt/pc/docs/streams.md:22
	return err
//line /work/wt/pc/docs/streams.md:23
}
//line /work/wt/pc/docs/streams.md:24
err = pub.Publish(ctx, "events", Event{N: 1})
//line /work/wt/pc/docs/streams.md:25

//line /work/wt/pc/docs/streams.md:26
// Read from the start; each message with its offset.
//line /work/wt/pc/docs/streams.md:27
c, err := stream.Consume(ctx, conn, "events",
//line /work/wt/pc/docs/streams.md:28
	func(ctx context.Context, m stream.Message[Event]) error {
//line /work/wt/pc/docs/streams.md:29
		return project(ctx, m.Offset, m.Body) // an error stops the consumer (or, with Skip, goes to events.dlq)
//line /work/wt/pc/docs/streams.md:30
	},
//line /work/wt/pc/docs/streams.md:31
	stream.Options{Offset: stream.First()})
//line /work/wt/pc/docs/streams.md:32
if err != nil {
//line /work/wt/pc/docs/streams.md:33
	return err
//line /work/wt/pc/docs/streams.md:34
}
//line /work/wt/pc/docs/streams.md:35
defer c.Close(ctx)
_ = spec
_ = pub
_ = err
_ = c
_ = err
return nil
}

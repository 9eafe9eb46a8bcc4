package docblock

import "github.com/acemq-go/acemq"
import "context"
import "errors"
import "github.com/acemq-go/acemq/saga"


//line /work/wt/pc/docs/sagas.md:9
func reserveFlight(context.Context) error { panic(0) }
//line /work/wt/pc/docs/sagas.md:10
func cancelFlight(context.Context) error { panic(0) }
//line /work/wt/pc/docs/sagas.md:11
func reserveHotel(context.Context) error { panic(0) }
//line /work/wt/pc/docs/sagas.md:12
func cancelHotel(context.Context) error { panic(0) }
//line /work/wt/pc/docs/sagas.md:13
func charge(context.Context) error { panic(0) }


var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/sagas.md:17
err := saga.Run(ctx,
//line /work/wt/pc/docs/sagas.md:18
	saga.Step{Name: "reserve flight", Do: reserveFlight, Undo: cancelFlight},
//line /work/wt/pc/docs/sagas.md:19
	saga.Step{Name: "reserve hotel", Do: reserveHotel, Undo: cancelHotel},
//line /work/wt/pc/docs/sagas.md:20
	saga.Step{Name: "charge card", Do: charge}, // the last step needs no Undo
//line /work/wt/pc/docs/sagas.md:21
)
//line /work/wt/pc/docs/sagas.md:22
var failed *saga.Error
//line /work/wt/pc/docs/sagas.md:23
switch {
//line /work/wt/pc/docs/sagas.md:24
case err == nil:
//line /work/wt/pc/docs/sagas.md:25
	// every step done
//line /work/wt/pc/docs/sagas.md:26
case errors.Is(err, saga.ErrUncompensated):
//line /work/wt/pc/docs/sagas.md:27
	// failed.Uncompensated lists each step whose Undo failed, and why:
//line /work/wt/pc/docs/sagas.md:28
	// alert, or park the message that asked for it (acemq.Park(err)).
//line /work/wt/pc/docs/sagas.md:29
case errors.As(err, &failed):
//line /work/wt/pc/docs/sagas.md:30
	// failed.Step failed with failed.Err; failed.Compensated were undone.
//line /work/wt/pc/docs/sagas.md:31
}
_ = err
_ = failed
return nil
}

package sqlstore

import (
	"context"
	"strings"
	"testing"
)

// A panic in a flight (a driver's) is the error of each op it had not
// answered, and the group flies on: no caller waits forever, and the
// process lives.
func TestAPanicInAFlightIsItsOpsError(t *testing.T) {
	g := &group{}
	do := func(key string) error {
		_, err := g.do(t.Context(), &op{kind: opConfirm, key: key})
		return err
	}
	g.fly = func(ctx context.Context, ops []*op) []*op {
		ops[0].answer(0, nil) // answered, then the panic
		panic("the driver")
	}
	if err := do("a"); err != nil {
		t.Errorf("an op answered before the panic: %v; want its own answer", err)
	}
	g.fly = func(context.Context, []*op) []*op { panic("the driver") }
	if err := do("b"); err == nil || !strings.Contains(err.Error(), `"b" panicked: the driver`) {
		t.Errorf("an op the panicking flight had not answered: %v; want the panic as its error", err)
	}
	g.fly = func(_ context.Context, ops []*op) []*op {
		for _, o := range ops {
			o.answer(0, nil)
		}
		return nil
	}
	if err := do("c"); err != nil {
		t.Errorf("a flight after the panic: %v", err)
	}
}

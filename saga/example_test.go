package saga_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/acemq-go/acemq/saga"
)

func Example() {
	step := func(name string, fail error) saga.Step {
		return saga.Step{Name: name,
			Do:   func(context.Context) error { fmt.Println("do", name); return fail },
			Undo: func(context.Context) error { fmt.Println("undo", name); return nil }}
	}
	err := saga.Run(context.Background(),
		step("reserve stock", nil),
		step("charge card", nil),
		step("book courier", errors.New("no courier free")),
	)
	fmt.Println(err)
	fmt.Println("alert:", errors.Is(err, saga.ErrUncompensated))
	// Output:
	// do reserve stock
	// do charge card
	// do book courier
	// undo charge card
	// undo reserve stock
	// saga: step "book courier" failed: no courier free; compensated "charge card", "reserve stock"
	// alert: false
}

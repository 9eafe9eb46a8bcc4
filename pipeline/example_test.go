package pipeline_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/pipeline"
	"github.com/acemq-go/acemq/transport/memory"
)

// A pipeline of two steps on the in-process broker.
func Example() {
	ctx := context.Background()
	conn, err := acemq.New(memory.NewBroker().Connect())
	if err != nil {
		panic(err)
	}
	defer conn.Close()

	done := make(chan pipeline.Finished, 1)
	words := pipeline.Pipeline{Name: "words", Steps: []string{"upper", "exclaim"},
		OnFinish: func(_ context.Context, f pipeline.Finished) { done <- f }}
	if err := words.Declare(ctx, conn); err != nil {
		panic(err)
	}
	for step, change := range map[string]func(string) string{
		"upper":   strings.ToUpper,
		"exclaim": func(s string) string { return s + "!" },
	} {
		c, err := pipeline.Run(ctx, conn, words, step, func(ctx context.Context, m acemq.Message[string]) acemq.Decision {
			return pipeline.Next(ctx, change(m.Body))
		})
		if err != nil {
			panic(err)
		}
		defer c.Close(ctx)
	}
	if err := words.Start(ctx, conn, "hello"); err != nil {
		panic(err)
	}
	f := <-done
	fmt.Printf("%s after %s\n", f.Body, strings.Join(f.Slip.Names(), ", "))
	// Output: "HELLO!" after upper, exclaim
}

package acemq_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/transport/memory"
)

// An option out of range is an error at the constructor, naming the option
// and the value, never a silent fix (WithBatchWindow(0) used to become 1).
func TestOptionsOutOfRangeAreErrors(t *testing.T) {
	conn := acemqtest.NewBroker(t).Connect(t)
	ctx := context.Background()
	accept := func(context.Context, acemq.Message[string]) acemq.Decision { return acemq.Accept() }
	for _, tt := range []struct {
		opt  acemq.Option
		want string
	}{
		{acemq.WithBatchWindow(0), "WithBatchWindow: invalid option: the batch window is 0 but must be at least 1"},
		{acemq.WithConfirmTimeout(0), "WithConfirmTimeout: invalid option"},
		{acemq.WithCodec(nil), "WithCodec: invalid option: the codec is nil"},
		{acemq.WithOrigin(""), "WithOrigin: invalid option"},
	} {
		if _, err := acemq.NewPublisher[string](conn, "orders", tt.opt); !errors.Is(err, acemq.ErrInvalidOption) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewPublisher with %s: %v; want ErrInvalidOption saying %q", tt.want[:strings.Index(tt.want, ":")], err, tt.want)
		}
	}
	for _, tt := range []struct {
		opt  acemq.Option
		want string
	}{
		{acemq.WithConcurrency(0), "WithConcurrency: invalid option: the concurrency is 0 but must be at least 1"},
		{acemq.WithPrefetch(-1), "WithPrefetch: invalid option"},
		{acemq.WithDrainTimeout(-time.Second), "WithDrainTimeout: invalid option"},
		{acemq.WithRungs("sideways"), `WithRungs: invalid option: unknown kind of rungs "sideways"`},
		{acemq.WithPolicy(acemq.Fixed(0, time.Second)), "WithPolicy: invalid retry policy"},
	} {
		if c, err := acemq.Consume(ctx, conn, "orders", accept, tt.opt); err == nil || !strings.Contains(err.Error(), tt.want) {
			if c != nil {
				_, _ = c.Close(ctx)
			}
			t.Errorf("Consume: %v; want an error saying %q", err, tt.want)
		}
	}
}

// One option type: each option says whom it configures, and a constructor
// given another's option refuses it by name; WithCodec is a Publisher's and
// a consumer's alike.
func TestOptionsBelongWhereTheySay(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	ctx := context.Background()
	accept := func(context.Context, acemq.Message[string]) acemq.Decision { return acemq.Accept() }
	if _, err := acemq.NewPublisher[string](conn, "orders", acemq.WithPrefetch(5)); err == nil || !strings.Contains(err.Error(), "WithPrefetch configures Consume, not NewPublisher") {
		t.Errorf("NewPublisher(WithPrefetch) = %v", err)
	}
	if c, err := acemq.Consume(ctx, conn, "orders", accept, acemq.WithBatchWindow(5)); err == nil || !strings.Contains(err.Error(), "WithBatchWindow configures NewPublisher, not Consume") {
		if c != nil {
			_, _ = c.Close(ctx)
		}
		t.Errorf("Consume(WithBatchWindow) = %v", err)
	}
	if _, err := acemq.Connect(ctx, "amqp://127.0.0.1:1/", acemq.WithConcurrency(2)); err == nil || !strings.Contains(err.Error(), "WithConcurrency configures Consume") {
		t.Errorf("Connect(WithConcurrency) = %v", err)
	}
	if _, err := acemq.NewPublisher[string](conn, "", acemq.WithCodec(acemq.Text)); err != nil {
		t.Errorf("NewPublisher(WithCodec): %v", err)
	}
	if _, err := acemq.Connect(ctx, "amqp://127.0.0.1:1/", acemq.WithFallbackURLs("memory://x")); !errors.Is(err, acemq.ErrInvalidOption) {
		t.Errorf("WithFallbackURLs(memory://x) = %v; want ErrInvalidOption", err)
	}
	var zero acemq.Option
	if _, err := acemq.NewPublisher[string](conn, "", zero); err == nil || !strings.Contains(err.Error(), "the zero Option") {
		t.Errorf("NewPublisher(the zero Option) = %v", err)
	}
}

// The error names every constructor an option belongs to, once.
func TestOptionErrorsNameTheConstructors(t *testing.T) {
	conn := acemqtest.NewBroker(t).Connect(t)
	_, err := acemq.NewPublisher[string](conn, "", acemq.WithLogger(nil))
	if err == nil || !strings.Contains(err.Error(), "WithLogger configures Connect and New, not NewPublisher") {
		t.Errorf("NewPublisher(WithLogger) = %v", err)
	}
	_, err = acemq.New(memory.NewBroker().Connect(), acemq.WithCodec(acemq.JSON))
	if err == nil || !strings.Contains(err.Error(), "WithCodec configures NewPublisher and Consume, not New") {
		t.Errorf("New(WithCodec) = %v", err)
	}
	_, err = acemq.New(memory.NewBroker().Connect(), acemq.WithTLS(nil))
	if err == nil || !strings.Contains(err.Error(), "WithTLS configures Connect, not New") {
		t.Errorf("New(WithTLS) = %v", err)
	}
}

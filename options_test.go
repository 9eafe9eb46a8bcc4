package acemq_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/internal/testing/compiletest"
)

// An option out of range is an error at the constructor, naming the option
// and the value, never a silent fix (WithBatchWindow(0) used to become 1).
func TestOptionsOutOfRangeAreErrors(t *testing.T) {
	conn := acemqtest.NewBroker(t).Connect(t)
	ctx := context.Background()
	accept := func(context.Context, acemq.Message[string]) acemq.Decision { return acemq.Accept() }
	for _, tt := range []struct {
		opt  acemq.PublisherOption
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
		opt  acemq.ConsumeOption
		want string
	}{
		{acemq.WithConcurrency(0), "WithConcurrency: invalid option: the concurrency is 0 but must be from 1 to 65535"},
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

// Each constructor has its own option type: an option given to one that
// does not take it does not compile; WithCodec is a Publisher's and a
// consumer's alike, the interceptors a Conn's and a Publisher's or a
// consumer's. (These were run-time errors naming the constructors.)
func TestMisplacedOptionsDoNotCompile(t *testing.T) {
	const (
		publisher = "does not implement acemq.PublisherOption"
		consume   = "does not implement acemq.ConsumeOption"
		connect   = "does not implement acemq.ConnectOption"
		conn      = "does not implement acemq.ConnOption"
	)
	compiletest.Check(t, []string{"context", "github.com/acemq-go/acemq", "github.com/acemq-go/acemq/transport"},
		"ctx context.Context, c *acemq.Conn, tr transport.Transport, h acemq.Handler[string], ic acemq.Interceptor",
		[]compiletest.Case{
			{Code: `acemq.NewPublisher[string](c, "", acemq.WithPrefetch(5))`, Error: publisher},
			{Code: `acemq.NewPublisher[string](c, "", acemq.WithLogger(nil))`, Error: publisher},
			{Code: `acemq.NewPublisher[string](c, "", acemq.WithConsumeInterceptors(ic))`, Error: publisher},
			{Code: `acemq.Consume(ctx, c, "orders", h, acemq.WithBatchWindow(5))`, Error: consume},
			{Code: `acemq.Consume(ctx, c, "orders", h, acemq.WithPublishInterceptors(ic))`, Error: consume},
			{Code: `acemq.Connect(ctx, "amqp://x/", acemq.WithConcurrency(2))`, Error: connect},
			{Code: `acemq.New(tr, acemq.WithCodec(acemq.JSON))`, Error: conn},
			{Code: `acemq.New(tr, acemq.WithTLS(nil))`, Error: conn},
			{Code: `acemq.New(tr, acemq.WithFallbackURLs("amqp://y/"))`, Error: conn},
			{Code: `acemq.New(tr, acemq.WithDevelopmentCertificates())`, Error: conn},
			{Code: `acemq.NewPublisher[string](c, "", acemq.WithCodec(acemq.Text), acemq.WithPublishInterceptors(ic))`, Error: ""},
			{Code: `acemq.Consume(ctx, c, "orders", h, acemq.WithCodec(acemq.Text), acemq.WithConsumeInterceptors(ic))`, Error: ""},
			{Code: `acemq.Connect(ctx, "amqp://x/", acemq.WithTLS(nil), acemq.WithLogger(nil), acemq.WithPublishInterceptors(ic), acemq.WithConsumeInterceptors(ic))`, Error: ""},
			{Code: `acemq.New(tr, acemq.WithLogger(nil), acemq.WithPublishInterceptors(ic), acemq.WithConsumeInterceptors(ic))`, Error: ""},
		})
}

// An option's value is checked where it is given; an option not made by
// its With function (nil, or the zero value of an option type) is an
// error, never a panic.
func TestOptionsBelongWhereTheySay(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	ctx := context.Background()
	if _, err := acemq.NewPublisher[string](conn, "", acemq.WithCodec(acemq.Text)); err != nil {
		t.Errorf("NewPublisher(WithCodec): %v", err)
	}
	if _, err := acemq.Connect(ctx, "amqp://127.0.0.1:1/", acemq.WithFallbackURLs("memory://x")); !errors.Is(err, acemq.ErrInvalidOption) {
		t.Errorf("WithFallbackURLs(memory://x) = %v; want ErrInvalidOption", err)
	}
	var zero acemq.CodecOption
	if _, err := acemq.NewPublisher[string](conn, "", zero); err == nil || !strings.Contains(err.Error(), "the zero option") {
		t.Errorf("NewPublisher(the zero CodecOption) = %v", err)
	}
	var none acemq.ConsumeOption
	accept := func(context.Context, acemq.Message[string]) acemq.Decision { return acemq.Accept() }
	if c, err := acemq.Consume(ctx, conn, "orders", accept, none); err == nil || !strings.Contains(err.Error(), "a nil option") {
		if c != nil {
			_, _ = c.Close(ctx)
		}
		t.Errorf("Consume(a nil ConsumeOption) = %v", err)
	}
}

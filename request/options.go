package request

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
)

// Option configures a Client (NewClient) or a responder (Serve); each says
// which it is for, and the other refuses it.
type Option struct {
	name  string
	scope scope
	apply func(*config) error
}

type scope uint8

const (
	forClient scope = 1 << iota
	forServe
)

type config struct {
	timeout   time.Duration
	codec     acemq.Codec
	logger    *slog.Logger
	replyType string
	consume   []acemq.Option
}

func apply(opts []Option, by string, accepts scope) (config, error) {
	c := config{timeout: DefaultTimeout, logger: slog.New(slog.DiscardHandler), replyType: contract.ReplyType}
	for _, o := range opts {
		if o.apply == nil {
			return config{}, fmt.Errorf("request: %s: a zero Option", by)
		}
		if o.scope&accepts == 0 {
			return config{}, fmt.Errorf("request: %s does not take the option %s", by, o.name)
		}
		if err := o.apply(&c); err != nil {
			return config{}, fmt.Errorf("request: %s: %s: %w", by, o.name, err)
		}
	}
	return c, nil
}

// WithTimeout bounds each request whose context has no deadline (default
// DefaultTimeout); 0 leaves such a request unbounded. For NewClient.
func WithTimeout(d time.Duration) Option {
	return Option{"WithTimeout", forClient, func(c *config) error {
		if d < 0 {
			return fmt.Errorf("the timeout is %v, want 0 or more", d)
		}
		c.timeout = d
		return nil
	}}
}

// WithCodec encodes and decodes requests and replies with codec, instead
// of the default by type (Bytes for []byte, Text for string, JSON
// otherwise). For NewClient and Serve.
func WithCodec(codec acemq.Codec) Option {
	return Option{"WithCodec", forClient | forServe, func(c *config) error {
		if codec == nil {
			return errors.New("the codec is nil")
		}
		c.codec = codec
		return nil
	}}
}

// WithLogger logs what goes wrong out of a caller's sight: a reply that
// matches no request, a reply that could not be sent. For NewClient and
// Serve.
func WithLogger(l *slog.Logger) Option {
	return Option{"WithLogger", forClient | forServe, func(c *config) error {
		if l == nil {
			return errors.New("the logger is nil")
		}
		c.logger = l
		return nil
	}}
}

// WithReplyType sets the message type of the replies (default "Reply",
// contract.ReplyType). For Serve.
func WithReplyType(t string) Option {
	return Option{"WithReplyType", forServe, func(c *config) error {
		if t == "" {
			return errors.New("the reply type is empty")
		}
		c.replyType = t
		return nil
	}}
}

// WithConsumeOptions passes options to the responder's acemq.Consume: its
// retry policy, prefetch, concurrency... For Serve.
func WithConsumeOptions(opts ...acemq.Option) Option {
	return Option{"WithConsumeOptions", forServe, func(c *config) error {
		c.consume = append(c.consume, opts...)
		return nil
	}}
}

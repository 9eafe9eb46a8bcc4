package request

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/option"
)

// Each constructor has its own option type, as acemq's do (see
// docs/connecting.md#options): an option given to one that does not take
// it is a compile error.

// ClientOption configures NewClient.
type ClientOption interface{ clientSetting() setting }

// ServeOption configures Serve.
type ServeOption interface{ serveSetting() setting }

// Option is what NewClient and Serve both take (WithCodec, WithLogger): a
// ClientOption and a ServeOption.
type Option struct{ s setting }

var (
	_ ClientOption = Option{}
	_ ServeOption  = Option{}
)

type setting = option.Setting[config]

type (
	clientOption setting
	serveOption  setting
)

func (o clientOption) clientSetting() setting { return setting(o) }
func (o serveOption) serveSetting() setting   { return setting(o) }
func (o Option) clientSetting() setting       { return o.s }
func (o Option) serveSetting() setting        { return o.s }

type config struct {
	timeout   time.Duration
	codec     acemq.Codec
	logger    *slog.Logger
	replyType string
	consume   []acemq.ConsumeOption
}

// configure applies opts, through their settings (of), over the
// defaults; its error names the constructor by.
func configure[O any](opts []O, of func(O) setting, by string) (config, error) {
	c := config{timeout: DefaultTimeout, logger: slog.New(slog.DiscardHandler), replyType: contract.ReplyType}
	if err := option.Apply(&c, opts, of); err != nil {
		return config{}, fmt.Errorf("request: %s: %w", by, err)
	}
	return c, nil
}

// WithTimeout bounds each request whose context has no deadline (default
// DefaultTimeout); 0 leaves such a request unbounded. For NewClient.
func WithTimeout(d time.Duration) ClientOption {
	return clientOption(option.Named("WithTimeout", func(c *config) error {
		if d < 0 {
			return fmt.Errorf("the timeout is %v, want 0 or more", d)
		}
		c.timeout = d
		return nil
	}))
}

// WithCodec encodes and decodes requests and replies with codec, instead
// of the default by type (Bytes for []byte, Text for string, JSON
// otherwise). For NewClient and Serve.
func WithCodec(codec acemq.Codec) Option {
	return Option{option.Named("WithCodec", func(c *config) error {
		if codec == nil {
			return errors.New("the codec is nil")
		}
		c.codec = codec
		return nil
	})}
}

// WithLogger logs what goes wrong out of a caller's sight: a reply that
// matches no request, a reply that could not be sent. For NewClient and
// Serve.
func WithLogger(l *slog.Logger) Option {
	return Option{option.Named("WithLogger", func(c *config) error {
		if l == nil {
			return errors.New("the logger is nil")
		}
		c.logger = l
		return nil
	})}
}

// WithReplyType sets the message type of the replies (default "Reply",
// contract.ReplyType). For Serve.
func WithReplyType(t string) ServeOption {
	return serveOption(option.Named("WithReplyType", func(c *config) error {
		if t == "" {
			return errors.New("the reply type is empty")
		}
		c.replyType = t
		return nil
	}))
}

// WithConsumeOptions passes options to the responder's acemq.Consume: its
// retry policy, prefetch, concurrency... For Serve.
func WithConsumeOptions(opts ...acemq.ConsumeOption) ServeOption {
	return serveOption(option.Named("WithConsumeOptions", func(c *config) error {
		c.consume = append(c.consume, opts...)
		return nil
	}))
}

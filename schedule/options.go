package schedule

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/option"
)

// New and Scheduler.Forward each have their own option type, as acemq's
// constructors do (see docs/connecting.md#options): an option given to the other
// is a compile error.

// Option configures a Scheduler (New).
type Option interface{ newSetting() setting }

// ForwardOption configures a Scheduler's forwarder (Scheduler.Forward).
type ForwardOption interface{ forwardSetting() setting }

type setting = option.Setting[config]

type (
	newOption     setting
	forwardOption setting
)

func (o newOption) newSetting() setting         { return setting(o) }
func (o forwardOption) forwardSetting() setting { return setting(o) }

type config struct {
	exchange string
	clock    acemq.Clock
	codec    acemq.Codec
	logger   *slog.Logger
	consume  []acemq.ConsumeOption
}

// configure applies opts, through their settings (of), over the
// defaults; its error names the constructor by.
func configure[O any](opts []O, of func(O) setting, by string) (config, error) {
	c := config{exchange: contract.ScheduleExchange, clock: acemq.SystemClock, logger: slog.New(slog.DiscardHandler)}
	if err := option.Apply(&c, opts, of); err != nil {
		return config{}, fmt.Errorf("schedule: %s: %w", by, err)
	}
	return c, nil
}

// WithExchange renames the scheduler's exchange, and with it its queues
// (name.1h ... name.1s, name.due), for a vhost several schedulers share
// or a test of its own. Every library of the family uses the default,
// contract.ScheduleExchange: a renamed scheduler shares nothing with them.
// For New.
func WithExchange(name string) Option {
	return newOption(option.Named("WithExchange", func(c *config) error {
		switch {
		case strings.TrimSpace(name) == "":
			return errors.New("the exchange name is blank")
		case strings.HasPrefix(name, "amq."):
			return fmt.Errorf("the exchange name %q starts with amq., which RabbitMQ reserves", name)
		}
		c.exchange = name
		return nil
	}))
}

// WithClock sets the time the scheduler reads: when a message is due, and
// how much of its wait remains (default the system clock). Give it the
// clock the Conn has (acemq.WithClock), such as a memory:// broker's
// manual clock in a test. For New.
func WithClock(clock acemq.Clock) Option {
	return newOption(option.Named("WithClock", func(c *config) error {
		if clock == nil {
			return errors.New("the clock is nil")
		}
		c.clock = clock
		return nil
	}))
}

// WithCodec encodes the bodies PublishIn and PublishAt are given with codec
// (default by the body's type: Bytes for []byte, Text for string, JSON
// otherwise); its content type is the one the message is delivered with.
// For New.
func WithCodec(codec acemq.Codec) Option {
	return newOption(option.Named("WithCodec", func(c *config) error {
		if codec == nil {
			return errors.New("the codec is nil")
		}
		c.codec = codec
		return nil
	}))
}

// WithLogger logs the foreign messages the forwarder parks. For Forward.
func WithLogger(l *slog.Logger) ForwardOption {
	return forwardOption(option.Named("WithLogger", func(c *config) error {
		if l == nil {
			return errors.New("the logger is nil")
		}
		c.logger = l
		return nil
	}))
}

// WithConsumeOptions passes options to the forwarder's acemq.Consume, after
// its defaults (DefaultPolicy, DefaultPrefetch, DefaultConcurrency), which
// they override: a retry policy, prefetch, concurrency, drain timeout...
// For Forward.
func WithConsumeOptions(opts ...acemq.ConsumeOption) ForwardOption {
	return forwardOption(option.Named("WithConsumeOptions", func(c *config) error {
		c.consume = append(c.consume, opts...)
		return nil
	}))
}

package schedule

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
)

// Option configures a Scheduler (New) or its forwarder (Scheduler.Forward);
// each says which it is for, and the other refuses it.
type Option struct {
	name  string
	scope scope
	apply func(*config) error
}

type scope uint8

const (
	forNew scope = 1 << iota
	forForward
)

type config struct {
	exchange string
	clock    acemq.Clock
	codec    acemq.Codec
	logger   *slog.Logger
	consume  []acemq.Option
}

func apply(opts []Option, by string, accepts scope) (config, error) {
	c := config{exchange: contract.ScheduleExchange, clock: acemq.SystemClock, logger: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		if o.apply == nil {
			return config{}, fmt.Errorf("schedule: %s: a zero Option", by)
		}
		if o.scope&accepts == 0 {
			return config{}, fmt.Errorf("schedule: %s does not take the option %s", by, o.name)
		}
		if err := o.apply(&c); err != nil {
			return config{}, fmt.Errorf("schedule: %s: %s: %w", by, o.name, err)
		}
	}
	return c, nil
}

// WithExchange renames the scheduler's exchange, and with it its queues
// (name.1h ... name.1s, name.due), for a vhost several schedulers share
// or a test of its own. Every library of the family uses the default,
// contract.ScheduleExchange: a renamed scheduler shares nothing with them.
// For New.
func WithExchange(name string) Option {
	return Option{"WithExchange", forNew, func(c *config) error {
		switch {
		case strings.TrimSpace(name) == "":
			return errors.New("the exchange name is blank")
		case strings.HasPrefix(name, "amq."):
			return fmt.Errorf("the exchange name %q starts with amq., which RabbitMQ reserves", name)
		}
		c.exchange = name
		return nil
	}}
}

// WithClock sets the time the scheduler reads: when a message is due, and
// how much of its wait remains (default the system clock). Give it the
// clock the Conn has (acemq.WithClock), such as a memory:// broker's
// manual clock in a test. For New.
func WithClock(clock acemq.Clock) Option {
	return Option{"WithClock", forNew, func(c *config) error {
		if clock == nil {
			return errors.New("the clock is nil")
		}
		c.clock = clock
		return nil
	}}
}

// WithCodec encodes the bodies PublishIn and PublishAt are given with codec
// (default by the body's type: Bytes for []byte, Text for string, JSON
// otherwise); its content type is the one the message is delivered with.
// For New.
func WithCodec(codec acemq.Codec) Option {
	return Option{"WithCodec", forNew, func(c *config) error {
		if codec == nil {
			return errors.New("the codec is nil")
		}
		c.codec = codec
		return nil
	}}
}

// WithLogger logs the foreign messages the forwarder parks. For Forward.
func WithLogger(l *slog.Logger) Option {
	return Option{"WithLogger", forForward, func(c *config) error {
		if l == nil {
			return errors.New("the logger is nil")
		}
		c.logger = l
		return nil
	}}
}

// WithConsumeOptions passes options to the forwarder's acemq.Consume, after
// its defaults (DefaultPolicy, DefaultPrefetch, DefaultConcurrency), which
// they override: a retry policy, prefetch, concurrency, drain timeout...
// For Forward.
func WithConsumeOptions(opts ...acemq.Option) Option {
	return Option{"WithConsumeOptions", forForward, func(c *config) error {
		c.consume = append(c.consume, opts...)
		return nil
	}}
}

package acemq

import (
	"fmt"

	"github.com/acemq-go/acemq/internal/option"
)

// The options of each constructor are a type of their own, as nats.go
// types a subscription's options apart from a connection's: an option
// given to a constructor that does not take it is a compile error, and an
// option that several take (WithCodec, the interceptors) has a type that is
// each of theirs. A value out of range is the constructor's error, naming
// the option (ErrInvalidOption).

// ConnectOption configures Connect: how it reaches RabbitMQ (TLS,
// credentials, fallback URLs, the connection's name). Every ConnOption is
// a ConnectOption too, since Connect makes a Conn.
type ConnectOption interface{ connectSetting() setting }

// ConnOption configures a Conn, made by New or Connect: its logger, clock,
// observer and interceptors.
type ConnOption interface {
	ConnectOption
	connSetting() setting
}

// PublisherOption configures NewPublisher.
type PublisherOption interface{ publisherSetting() setting }

// ConsumeOption configures Consume.
type ConsumeOption interface{ consumeSetting() setting }

// CodecOption is WithCodec's: a PublisherOption and a ConsumeOption.
type CodecOption struct{ s setting }

// PublishInterceptorsOption is WithPublishInterceptors': a ConnOption (every
// publish of the Conn) and a PublisherOption (one Publisher's).
type PublishInterceptorsOption struct{ s setting }

// ConsumeInterceptorsOption is WithConsumeInterceptors': a ConnOption
// (every consumer of the Conn) and a ConsumeOption (one consumer's).
type ConsumeInterceptorsOption struct{ s setting }

// The options that several constructors take are each of theirs.
var (
	_ PublisherOption = CodecOption{}
	_ ConsumeOption   = CodecOption{}
	_ ConnOption      = PublishInterceptorsOption{}
	_ PublisherOption = PublishInterceptorsOption{}
	_ ConnOption      = ConsumeInterceptorsOption{}
	_ ConsumeOption   = ConsumeInterceptorsOption{}
)

type setting = option.Setting[options]

// The option types of one constructor each.
type (
	connectOption   setting
	connOption      setting
	publisherOption setting
	consumeOption   setting
)

func (o connectOption) connectSetting() setting     { return setting(o) }
func (o connOption) connectSetting() setting        { return setting(o) }
func (o connOption) connSetting() setting           { return setting(o) }
func (o publisherOption) publisherSetting() setting { return setting(o) }
func (o consumeOption) consumeSetting() setting     { return setting(o) }

func (o CodecOption) publisherSetting() setting               { return o.s }
func (o CodecOption) consumeSetting() setting                 { return o.s }
func (o PublishInterceptorsOption) connectSetting() setting   { return o.s }
func (o PublishInterceptorsOption) connSetting() setting      { return o.s }
func (o PublishInterceptorsOption) publisherSetting() setting { return o.s }
func (o ConsumeInterceptorsOption) connectSetting() setting   { return o.s }
func (o ConsumeInterceptorsOption) connSetting() setting      { return o.s }
func (o ConsumeInterceptorsOption) consumeSetting() setting   { return o.s }

// configure applies opts to all, each through its setting (of), and joins
// every problem into one error naming subject.
func configure[O any](all *options, opts []O, of func(O) setting, subject string) error {
	if err := option.Apply(all, opts, of); err != nil {
		return fmt.Errorf("acemq: %s: %w", subject, err)
	}
	return nil
}

module github.com/acemq-go/acemq/console

go 1.26.8

require (
	github.com/acemq-go/acemq v0.0.0
	github.com/acemq-go/acemq/codec/avro v0.0.0-00010101000000-000000000000
	github.com/acemq-go/acemq/internal/testing/browsertest v0.0.0-00010101000000-000000000000
	github.com/chromedp/chromedp v0.24.0
	github.com/hamba/avro/v2 v2.31.0
	golang.org/x/time v0.16.0
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/acemq-go/acemq/actuator v0.0.0-00010101000000-000000000000
	github.com/chromedp/cdproto v0.160.1 // indirect
	github.com/expr-lang/expr v1.17.8 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/go-viper/mapstructure/v2 v2.4.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/michaelklishin/rabbit-hole/v2 v2.12.0 // indirect
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd // indirect
	github.com/modern-go/reflect2 v1.0.2 // indirect
	github.com/rabbitmq/amqp091-go v1.17.0 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
)

// In-repository modules, versioned together: go.work ties them for
// development; these replaces let the module build on its own.
replace (
	github.com/acemq-go/acemq => ..
	github.com/acemq-go/acemq/acemqotel => ../acemqotel
	github.com/acemq-go/acemq/acemqprom => ../acemqprom
	github.com/acemq-go/acemq/actuator => ../actuator
	github.com/acemq-go/acemq/cmd/acemq => ../cmd/acemq
	github.com/acemq-go/acemq/codec/avro => ../codec/avro
	github.com/acemq-go/acemq/codec/protobuf => ../codec/protobuf
	github.com/acemq-go/acemq/examples => ../examples
	github.com/acemq-go/acemq/idempotency/sqlstore => ../idempotency/sqlstore
	github.com/acemq-go/acemq/internal/sqldb => ../internal/sqldb
	github.com/acemq-go/acemq/internal/testing/browsertest => ../internal/testing/browsertest
	github.com/acemq-go/acemq/internal/testing/chaos => ../internal/testing/chaos
	github.com/acemq-go/acemq/internal/testing/dbtest => ../internal/testing/dbtest
	github.com/acemq-go/acemq/internal/testing/testpb => ../internal/testing/testpb
	github.com/acemq-go/acemq/outbox/sqlstore => ../outbox/sqlstore
	github.com/acemq-go/acemq/schemaregistry/sqlregistry => ../schemaregistry/sqlregistry
)

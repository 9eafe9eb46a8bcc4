module github.com/acemq-go/acemq/acemqotel

go 1.26.8

require (
	github.com/acemq-go/acemq v0.0.0
	go.opentelemetry.io/otel v1.47.0
	go.opentelemetry.io/otel/sdk v1.47.0
	go.opentelemetry.io/otel/trace v1.47.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/rabbitmq/amqp091-go v1.17.0 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)

// In-repository modules, versioned together: go.work ties them for
// development; these replaces let the module build on its own.
replace (
	github.com/acemq-go/acemq => ..
	github.com/acemq-go/acemq/acemqprom => ../acemqprom
	github.com/acemq-go/acemq/actuator => ../actuator
	github.com/acemq-go/acemq/cmd/acemq => ../cmd/acemq
	github.com/acemq-go/acemq/codec/avro => ../codec/avro
	github.com/acemq-go/acemq/codec/protobuf => ../codec/protobuf
	github.com/acemq-go/acemq/console => ../console
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

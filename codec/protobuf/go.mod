module github.com/acemq-go/acemq/codec/protobuf

go 1.26.8

require (
	github.com/acemq-go/acemq v0.0.0
	github.com/acemq-go/acemq/internal/testing/testpb v0.0.0-00010101000000-000000000000
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/google/uuid v1.6.0 // indirect
	github.com/rabbitmq/amqp091-go v1.17.0 // indirect
)

// In-repository modules, versioned together: go.work ties them for
// development; these replaces let the module build on its own.
replace (
	github.com/acemq-go/acemq => ../..
	github.com/acemq-go/acemq/acemqotel => ../../acemqotel
	github.com/acemq-go/acemq/acemqprom => ../../acemqprom
	github.com/acemq-go/acemq/actuator => ../../actuator
	github.com/acemq-go/acemq/cmd/acemq => ../../cmd/acemq
	github.com/acemq-go/acemq/codec/avro => ../../codec/avro
	github.com/acemq-go/acemq/console => ../../console
	github.com/acemq-go/acemq/examples => ../../examples
	github.com/acemq-go/acemq/idempotency/sqlstore => ../../idempotency/sqlstore
	github.com/acemq-go/acemq/internal/sqldb => ../../internal/sqldb
	github.com/acemq-go/acemq/internal/testing/browsertest => ../../internal/testing/browsertest
	github.com/acemq-go/acemq/internal/testing/chaos => ../../internal/testing/chaos
	github.com/acemq-go/acemq/internal/testing/dbtest => ../../internal/testing/dbtest
	github.com/acemq-go/acemq/internal/testing/testpb => ../../internal/testing/testpb
	github.com/acemq-go/acemq/outbox/sqlstore => ../../outbox/sqlstore
	github.com/acemq-go/acemq/schemaregistry/sqlregistry => ../../schemaregistry/sqlregistry
)

module github.com/acemq-go/acemq/internal/testing/testpb

go 1.26.8

require google.golang.org/protobuf v1.36.12

// In-repository modules, versioned together: go.work ties them for
// development; these replaces let the module build on its own.
replace (
	github.com/acemq-go/acemq => ../../..
	github.com/acemq-go/acemq/acemqotel => ../../../acemqotel
	github.com/acemq-go/acemq/acemqprom => ../../../acemqprom
	github.com/acemq-go/acemq/actuator => ../../../actuator
	github.com/acemq-go/acemq/cmd/acemq => ../../../cmd/acemq
	github.com/acemq-go/acemq/codec/avro => ../../../codec/avro
	github.com/acemq-go/acemq/codec/protobuf => ../../../codec/protobuf
	github.com/acemq-go/acemq/console => ../../../console
	github.com/acemq-go/acemq/examples => ../../../examples
	github.com/acemq-go/acemq/idempotency/sqlstore => ../../../idempotency/sqlstore
	github.com/acemq-go/acemq/internal/sqldb => ../../../internal/sqldb
	github.com/acemq-go/acemq/internal/testing/browsertest => ../../../internal/testing/browsertest
	github.com/acemq-go/acemq/internal/testing/chaos => ../../../internal/testing/chaos
	github.com/acemq-go/acemq/internal/testing/dbtest => ../../../internal/testing/dbtest
	github.com/acemq-go/acemq/outbox/sqlstore => ../../../outbox/sqlstore
	github.com/acemq-go/acemq/schemaregistry/sqlregistry => ../../../schemaregistry/sqlregistry
)

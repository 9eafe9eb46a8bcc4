module github.com/acemq-go/acemq/internal/testing/chaos

go 1.26.8

require (
	github.com/acemq-go/acemq v0.0.0
	github.com/acemq-go/acemq/idempotency/sqlstore v0.0.0-00010101000000-000000000000
	github.com/acemq-go/acemq/internal/testing/dbtest v0.0.0-00010101000000-000000000000
	github.com/acemq-go/acemq/outbox/sqlstore v0.0.0-00010101000000-000000000000
	github.com/prometheus/procfs v0.22.0
)

require (
	github.com/acemq-go/acemq/internal/sqldb v0.0.0-00010101000000-000000000000 // indirect
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/pgx/v5 v5.13.0 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/rabbitmq/amqp091-go v1.17.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.41.0 // indirect
	modernc.org/libc v1.80.1 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
	modernc.org/sqlite v1.63.0 // indirect
)

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
	github.com/acemq-go/acemq/internal/testing/dbtest => ../../../internal/testing/dbtest
	github.com/acemq-go/acemq/internal/testing/testpb => ../../../internal/testing/testpb
	github.com/acemq-go/acemq/outbox/sqlstore => ../../../outbox/sqlstore
	github.com/acemq-go/acemq/schemaregistry/sqlregistry => ../../../schemaregistry/sqlregistry
)

module github.com/acemq-go/acemq/acemqprom

go 1.26.8

require (
	github.com/acemq-go/acemq v0.0.0
	github.com/acemq-go/acemq/outbox/sqlstore v0.0.0-00010101000000-000000000000
	github.com/prometheus/client_golang v1.25.0
	go.yaml.in/yaml/v3 v3.0.6
)

require (
	github.com/acemq-go/acemq/internal/sqldb v0.0.0-00010101000000-000000000000 // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/kylelemons/godebug v1.1.0 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	github.com/rabbitmq/amqp091-go v1.17.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	golang.org/x/sys v0.50.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	modernc.org/libc v1.80.1 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
	modernc.org/sqlite v1.63.0 // indirect
)

// In-repository modules, versioned together: go.work ties them for
// development; these replaces let the module build on its own.
replace (
	github.com/acemq-go/acemq => ..
	github.com/acemq-go/acemq/acemqotel => ../acemqotel
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

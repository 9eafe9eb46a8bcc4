module github.com/acemq-go/acemq/internal/testing/browsertest

go 1.26.8

require github.com/chromedp/chromedp v0.24.0

require (
	github.com/chromedp/cdproto v0.160.1 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
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
	github.com/acemq-go/acemq/internal/testing/chaos => ../../../internal/testing/chaos
	github.com/acemq-go/acemq/internal/testing/dbtest => ../../../internal/testing/dbtest
	github.com/acemq-go/acemq/internal/testing/testpb => ../../../internal/testing/testpb
	github.com/acemq-go/acemq/outbox/sqlstore => ../../../outbox/sqlstore
	github.com/acemq-go/acemq/schemaregistry/sqlregistry => ../../../schemaregistry/sqlregistry
)

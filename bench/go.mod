module github.com/acemq-go/acemq/bench

go 1.26.8

require (
	github.com/ThreeDotsLabs/watermill v1.5.1
	github.com/ThreeDotsLabs/watermill-amqp/v3 v3.0.2
	github.com/acemq-go/acemq v0.0.0
	github.com/acemq-go/acemq/acemqotel v0.0.0-00010101000000-000000000000
	github.com/acemq-go/acemq/acemqprom v0.0.0-00010101000000-000000000000
	github.com/acemq-go/acemq/codec/avro v0.0.0-00010101000000-000000000000
	github.com/acemq-go/acemq/codec/protobuf v0.0.0-00010101000000-000000000000
	github.com/acemq-go/acemq/console v0.0.0-00010101000000-000000000000
	github.com/acemq-go/acemq/idempotency/sqlstore v0.0.0-00010101000000-000000000000
	github.com/acemq-go/acemq/internal/testing/testpb v0.0.0-00010101000000-000000000000
	github.com/acemq-go/acemq/outbox/sqlstore v0.0.0-00010101000000-000000000000
	github.com/google/uuid v1.6.0
	github.com/hamba/avro/v2 v2.31.0
	github.com/pelletier/go-toml/v2 v2.4.3
	github.com/prometheus/client_golang v1.25.0
	github.com/rabbitmq/amqp091-go v1.17.0
	go.opentelemetry.io/otel/sdk v1.47.0
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/exp v0.0.0-20261014143641-f0251eb4aa3e
	golang.org/x/tools v0.52.0
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/acemq-go/acemq/internal/sqldb v0.0.0-00010101000000-000000000000 // indirect
	github.com/acemq-go/acemq/internal/testing/browsertest v0.0.0-00010101000000-000000000000 // indirect
	github.com/acemq-go/acemq/internal/testing/dbtest v0.0.0-00010101000000-000000000000 // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cenkalti/backoff/v3 v3.2.2 // indirect
	github.com/cenkalti/backoff/v5 v5.0.3 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/chromedp/chromedp v0.24.0 // indirect
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/expr-lang/expr v1.17.8 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/go-viper/mapstructure/v2 v2.4.0 // indirect
	github.com/hashicorp/errwrap v1.1.0 // indirect
	github.com/hashicorp/go-multierror v1.1.1 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/pgx/v5 v5.13.0 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/lithammer/shortuuid/v3 v3.0.7 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/michaelklishin/rabbit-hole/v2 v2.12.0 // indirect
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd // indirect
	github.com/modern-go/reflect2 v1.0.2 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/oklog/ulid v1.3.1 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	github.com/sony/gobreaker v1.0.0 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel v1.47.0 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
	go.opentelemetry.io/otel/trace v1.47.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	golang.org/x/time v0.16.0 // indirect
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

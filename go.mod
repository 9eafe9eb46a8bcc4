module github.com/acemq-go/acemq

go 1.26.8

require (
	github.com/expr-lang/expr v1.17.8
	github.com/google/uuid v1.6.0
	github.com/michaelklishin/rabbit-hole/v2 v2.12.0
	github.com/pelletier/go-toml/v2 v2.4.3
	github.com/rabbitmq/amqp091-go v1.17.0
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/time v0.16.0
)

require (
	golang.org/x/net v0.59.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)

module github.com/acemq-go/acemq

go 1.26.8

require (
	github.com/expr-lang/expr v1.17.8
	github.com/google/uuid v1.6.0
	github.com/michaelklishin/rabbit-hole/v2 v2.12.0
	github.com/rabbitmq/amqp091-go v1.16.0
	github.com/schollz/progressbar/v3 v3.19.1
	github.com/spf13/cobra v1.10.2
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/term v0.48.0
	golang.org/x/time v0.16.0
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/mitchellh/colorstring v0.0.0-20190213212951-d06e56a500db // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	golang.org/x/sys v0.50.0 // indirect
)

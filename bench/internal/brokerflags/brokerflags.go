// Package brokerflags is the broker of the console bench commands: the
// flags -url and -management-url, the test node's by default
// (ACEMQ_TEST_URL, ACEMQ_TEST_MANAGEMENT_URL), and a connection to it with
// its management endpoint.
package brokerflags

import (
	"context"
	"flag"
	"os"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/admin"
)

// Broker is the flags' values, read once flag.Parse has run.
type Broker struct{ amqpURL, managementURL *string }

// Register adds -url and -management-url to the command line's flags.
func Register() Broker {
	amqpURL := os.Getenv("ACEMQ_TEST_URL")
	if amqpURL == "" {
		amqpURL = "amqp://guest:guest@localhost:5672/"
	}
	return Broker{
		amqpURL:       flag.String("url", amqpURL, "the broker"),
		managementURL: flag.String("management-url", os.Getenv("ACEMQ_TEST_MANAGEMENT_URL"), "its management API (default: the AMQP host on port 15672)"),
	}
}

// Connect connects to the broker as name, and says where its management
// API is.
func (b Broker) Connect(ctx context.Context, name string) (*acemq.Conn, admin.Endpoint, error) {
	endpoint, err := admin.EndpointFor(*b.amqpURL, *b.managementURL)
	if err != nil {
		return nil, admin.Endpoint{}, err
	}
	conn, err := acemq.Connect(ctx, *b.amqpURL, acemq.WithConnectionName(name))
	if err != nil {
		return nil, admin.Endpoint{}, err
	}
	return conn, endpoint, nil
}

// URL is the broker's AMQP URL.
func (b Broker) URL() string { return *b.amqpURL }

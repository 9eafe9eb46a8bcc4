// Package management finds a RabbitMQ broker's management HTTP API from its
// AMQP URL: the one derivation that the CLI (through admin.EndpointFor) and
// the test helpers (internal/testing/brokertest) share. It imports nothing of
// AceMQ's, so that brokertest, which the transports' own tests use, can.
package management

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"
)

// DefaultPort is where RabbitMQ's management plugin listens.
const DefaultPort = "15672"

// Endpoint is a broker's management API and the vhost to read.
type Endpoint struct {
	URL      string // scheme, host and port (and a path prefix, if any); no credentials
	Username string
	Password string
	Vhost    string
}

// For finds the management API of the broker at amqpURL: at managementURL
// when it is not "", else at amqpURL's host on DefaultPort over HTTP. The
// credentials are managementURL's when it has any, else amqpURL's; the
// vhost is always amqpURL's ("/" by default).
func For(amqpURL, managementURL string) (Endpoint, error) {
	uri, err := amqp.ParseURI(amqpURL)
	if err != nil {
		// amqp091's errors quote the URL, password and all: say less.
		return Endpoint{}, fmt.Errorf("the AMQP URL must look like amqp://user:password@host:5672/vhost")
	}
	e := Endpoint{Username: uri.Username, Password: uri.Password, Vhost: uri.Vhost}
	if managementURL == "" {
		e.URL = "http://" + net.JoinHostPort(uri.Host, DefaultPort)
		return e, nil
	}
	m, err := url.Parse(managementURL)
	if err != nil || (m.Scheme != "http" && m.Scheme != "https") || m.Host == "" {
		return Endpoint{}, fmt.Errorf("the management URL must look like http://user:password@host:15672")
	}
	if m.User != nil {
		e.Username = m.User.Username()
		e.Password, _ = m.User.Password()
	}
	m.User = nil
	e.URL = strings.TrimSuffix(m.String(), "/")
	return e, nil
}

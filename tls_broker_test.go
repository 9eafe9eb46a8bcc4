package acemq_test

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"net"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/devcert"
	"github.com/acemq-go/acemq/internal/testing/reachtest"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/rabbitmq"
)

// TestRealTLSListener connects to a RabbitMQ node whose amqps:// listener
// serves the broker certificate `acemq certs` made and requires its client
// certificate (`make test`'s test nodes: ACEMQ_TEST_TLS_URL, and the files
// in ACEMQ_TEST_TLS_CERTS). Off CI it skips without them; under CI it fails.
func TestRealTLSListener(t *testing.T) {
	url, dir := os.Getenv("ACEMQ_TEST_TLS_URL"), os.Getenv("ACEMQ_TEST_TLS_CERTS")
	if url == "" || dir == "" {
		reachtest.Unavailable(t, "broker", "ACEMQ_TEST_TLS_URL and ACEMQ_TEST_TLS_CERTS are not set, so there is no TLS listener to test against; run `make test`, whose test nodes have one")
	}
	file := func(name string) string { return filepath.Join(dir, name) }
	for _, name := range []string{devcert.CAFile, devcert.ClientCertFile, devcert.ClientKeyFile} {
		if _, err := os.Stat(file(name)); err != nil {
			t.Fatalf("ACEMQ_TEST_TLS_CERTS=%s: %v", dir, err)
		}
	}
	client, err := tls.LoadX509KeyPair(file(devcert.ClientCertFile), file(devcert.ClientKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	verified := []acemq.ConnectOption{acemq.WithCA(file(devcert.CAFile)), acemq.WithClientCertificate(file(devcert.ClientCertFile), file(devcert.ClientKeyFile))}
	unverified := []acemq.ConnectOption{acemq.WithTLS(&tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{client}})}
	connect := func(t *testing.T, opts ...acemq.ConnectOption) (*acemq.Conn, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := acemq.Connect(ctx, url, append(opts, acemq.WithConnectionName(t.Name()))...)
		if err == nil {
			t.Cleanup(func() { _ = conn.Close() })
		}
		return conn, err
	}
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatalf("ACEMQ_TEST_TLS_URL: %v", err)
	}
	if c, err := net.DialTimeout("tcp", u.Host, 3*time.Second); err != nil {
		reachtest.Unavailable(t, "broker", "no TLS listener at "+reachtest.Redact(url)+": "+err.Error()+"; run `make test`, whose test nodes have one")
	} else {
		_ = c.Close()
	}

	for _, c := range []struct {
		name string
		opts []acemq.ConnectOption
	}{{"refused, the CA trusted", verified}, {"refused, verification off", unverified}} {
		t.Run(c.name, func(t *testing.T) {
			_, err := connect(t, c.opts...)
			if !errors.Is(err, rabbitmq.ErrDevelopmentCertificate) {
				t.Fatalf("Connect = %v, want rabbitmq.ErrDevelopmentCertificate", err)
			}
			t.Log(err)
			for _, want := range []string{"refused", contract.DevelopmentCertificateMarker, "acemq.WithDevelopmentCertificates()"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not say %q", want)
				}
			}
		})
	}

	for _, c := range []struct {
		name string
		opts []acemq.ConnectOption
	}{
		{"allowed, the CA trusted", verified},
		{"allowed, verification off", unverified},
		{"allowed, no client certificate", []acemq.ConnectOption{acemq.WithCA(file(devcert.CAFile))}},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, err := connect(t, append(c.opts, acemq.WithDevelopmentCertificates())...)
			if err != nil {
				t.Fatal(err)
			}
			roundTrip(t, conn)
		})
	}

	// The node checks a client certificate against the CA: one of another
	// set is refused by the broker, which accepted this set's above.
	t.Run("allowed, a client certificate of another CA", func(t *testing.T) {
		other, err := devcert.Generate(nil, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		stranger, err := tls.X509KeyPair(other.ClientCert, other.ClientKey)
		if err != nil {
			t.Fatal(err)
		}
		_, err = connect(t, acemq.WithTLS(&tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{stranger}}), acemq.WithDevelopmentCertificates())
		// TLS 1.3 ends the client's handshake before the broker has read
		// the client's certificate: the refusal comes as its alert
		// ("unknown certificate authority") or as the connection reset.
		if err == nil || errors.Is(err, rabbitmq.ErrDevelopmentCertificate) {
			t.Fatalf("Connect = %v, want the broker's refusal", err)
		}
		t.Log(err)
	})
}

// roundTrip publishes a message to a queue of its own, confirmed, and
// takes it back.
func roundTrip(t *testing.T, conn *acemq.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var b [4]byte
	_, _ = rand.Read(b[:])
	q := "acemq.test.tls." + hex.EncodeToString(b[:])
	tr := conn.Transport()
	if err := tr.DeclareQueue(ctx, transport.Queue{Name: q, Type: transport.Classic, Exclusive: true, AutoDelete: true}); err != nil {
		t.Fatal(err)
	}
	pub, err := acemq.NewPublisher[string](conn, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := pub.Publish(ctx, q, "over amqps://"); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	d, ok, err := tr.Get(ctx, q)
	if err != nil || !ok {
		t.Fatalf("Get = %v, %v; want the message", ok, err)
	}
	if string(d.Body) != "over amqps://" {
		t.Errorf("took %q back", d.Body)
	}
	if err := d.Ack(); err != nil {
		t.Error(err)
	}
}

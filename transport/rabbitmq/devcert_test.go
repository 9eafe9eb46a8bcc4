package rabbitmq

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/devcert"
)

// devSet is a set of development certificates, as `acemq certs` makes
// them: the broker's as a tls.Certificate and the CA as a pool.
func devSet(t *testing.T) (server tls.Certificate, ca *x509.CertPool, set *devcert.Set) {
	t.Helper()
	set, err := devcert.Generate(nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	server, err = tls.X509KeyPair(set.ServerCert, set.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	ca = x509.NewCertPool()
	if !ca.AppendCertsFromPEM(set.CA) {
		t.Fatal("the CA does not parse")
	}
	return server, ca, set
}

// tlsListener is a Go TLS listener on 127.0.0.1 that does the handshake of
// each connection and hangs up (it speaks no AMQP): a Dial through it
// fails either in the handshake, or after it with another error.
func tlsListener(t *testing.T, cert tls.Certificate) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			_ = c.Close()
		}
	}()
	return "amqps://guest:guest@" + ln.Addr().String() + "/"
}

func dialTLS(t *testing.T, url string, opts Options) (*Transport, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr, err := Dial(ctx, url, opts)
	if err == nil {
		t.Cleanup(func() { _ = tr.Close() })
	}
	return tr, err
}

// A broker certificate marked as a development certificate is refused,
// verification on or off, with an error that says what and how to allow
// it; so is one whose chain holds a marked certificate.
func TestDevelopmentCertificateRefused(t *testing.T) {
	t.Parallel()
	server, devCA, set := devSet(t)
	plainCA := newCA(t)
	plain := plainCA.issue(t, "localhost", []string{"localhost"}, net.IPv4(127, 0, 0, 1))
	// A certificate of its own followed by the development CA: a broker
	// may send any chain, and the marked CA is in this one.
	caBlock, _ := pem.Decode(set.CA)
	chained := tls.Certificate{Certificate: [][]byte{plain.Certificate[0], caBlock.Bytes}, PrivateKey: plain.PrivateKey}

	for _, c := range []struct {
		name   string
		cert   tls.Certificate
		cfg    *tls.Config
		saying string
	}{
		{"verification off", server, &tls.Config{InsecureSkipVerify: true}, `its subject "CN=AceMQ development broker,O=` + contract.DevelopmentCertificateMarker + `"`},
		{"verification on, the CA trusted", server, &tls.Config{RootCAs: devCA}, `issuer "CN=AceMQ development CA,O=` + contract.DevelopmentCertificateMarker + `"`},
		{"a marked certificate in the chain", chained, &tls.Config{InsecureSkipVerify: true}, `the certificate "CN=AceMQ development CA,O=` + contract.DevelopmentCertificateMarker + `" of its chain`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := dialTLS(t, tlsListener(t, c.cert), Options{TLS: c.cfg})
			if !errors.Is(err, ErrDevelopmentCertificate) {
				t.Fatalf("Dial = %v, want ErrDevelopmentCertificate", err)
			}
			t.Log(err)
			for _, want := range []string{"rabbitmq: connect to amqps://guest:xxxxx@127.0.0.1:", "is a development certificate, refused", c.saying,
				"carries the marker \"" + contract.DevelopmentCertificateMarker + "\"", "acemq.WithDevelopmentCertificates()"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not say %q", want)
				}
			}
		})
	}

	t.Run("a certificate of its own", func(t *testing.T) {
		t.Parallel()
		_, err := dialTLS(t, tlsListener(t, plain), Options{TLS: &tls.Config{InsecureSkipVerify: true}})
		if err == nil || errors.Is(err, ErrDevelopmentCertificate) {
			t.Fatalf("Dial = %v, want the listener's hang-up after the handshake", err)
		}
	})

	// With no tls.Config the URL's query configures TLS, as amqp091 reads
	// it; the check applies there too.
	t.Run("TLS from the URL", func(t *testing.T) {
		t.Parallel()
		caFile := filepath.Join(t.TempDir(), devcert.CAFile)
		if err := os.WriteFile(caFile, set.CA, 0o600); err != nil {
			t.Fatal(err)
		}
		u := tlsListener(t, server) + "?cacertfile=" + url.QueryEscape(caFile)
		if _, err := dialTLS(t, u, Options{}); !errors.Is(err, ErrDevelopmentCertificate) {
			t.Errorf("Dial = %v, want ErrDevelopmentCertificate", err)
		}
		_, err := dialTLS(t, u, Options{AllowDevelopmentCertificates: true})
		if err == nil || errors.Is(err, ErrDevelopmentCertificate) {
			t.Errorf("allowed: Dial = %v, want the listener's hang-up after the handshake", err)
		}
		var unknown x509.UnknownAuthorityError
		if errors.As(err, &unknown) {
			t.Errorf("the URL's cacertfile was not used: %v", err)
		}
	})
}

// Allowed, development certificates connect to the broker, verified
// against their CA or not; a VerifyConnection of the caller's own still
// runs after the check.
func TestDevelopmentCertificateAllowed(t *testing.T) {
	t.Parallel()
	server, devCA, _ := devSet(t)
	p := startProxy(t, &tls.Config{Certificates: []tls.Certificate{server}})
	for _, c := range []struct {
		name string
		cfg  *tls.Config
	}{
		{"verified", &tls.Config{RootCAs: devCA}},
		{"verification off", &tls.Config{InsecureSkipVerify: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, err := dialTLS(t, p.url(t, "amqps"), Options{TLS: c.cfg, AllowDevelopmentCertificates: true})
			if err != nil {
				t.Fatal(err)
			}
			publish(t, tr, classicQueue(t, tr, nil), "over TLS, a development certificate allowed")
		})
	}

	t.Run("the caller's VerifyConnection", func(t *testing.T) {
		var calls atomic.Int32
		own := errors.New("not this broker")
		verify := func(tls.ConnectionState) error { calls.Add(1); return own }
		_, err := dialTLS(t, p.url(t, "amqps"), Options{TLS: &tls.Config{RootCAs: devCA, VerifyConnection: verify}, AllowDevelopmentCertificates: true})
		if !errors.Is(err, own) || calls.Load() != 1 {
			t.Errorf("allowed: Dial = %v after %d calls, want the caller's error after 1", err, calls.Load())
		}
		calls.Store(0)
		_, err = dialTLS(t, p.url(t, "amqps"), Options{TLS: &tls.Config{RootCAs: devCA, VerifyConnection: verify}})
		if !errors.Is(err, ErrDevelopmentCertificate) || calls.Load() != 0 {
			t.Errorf("refused: Dial = %v after %d calls of the caller's, want ErrDevelopmentCertificate first", err, calls.Load())
		}
	})
}

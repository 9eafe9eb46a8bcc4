package acemq

import (
	"errors"

	"github.com/acemq-go/acemq/transport/memory"

	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// writeCert writes a self-signed CA certificate and its key as PEM files.
func writeCert(t *testing.T, dir, name string) (certFile, keyFile string, cert *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ = x509.ParseCertificate(der)
	return certFile, keyFile, cert
}

func TestTLSOptions(t *testing.T) {
	dir := t.TempDir()
	caFile, _, ca := writeCert(t, dir, "ca")
	certFile, keyFile, _ := writeCert(t, dir, "client")
	o := applied(t, WithCA(caFile), WithClientCertificate(certFile, keyFile), WithServerName("rabbit.internal"))
	cfg, err := o.tlsConfig()
	if err != nil {
		t.Fatal(err)
	}
	want := x509.NewCertPool()
	want.AddCert(ca)
	if !cfg.RootCAs.Equal(want) {
		t.Errorf("RootCAs is not exactly the CA file: the CA must replace the system pool")
	}
	if len(cfg.Certificates) != 1 || cfg.ServerName != "rabbit.internal" {
		t.Errorf("config %+v", cfg)
	}

	if cfg, err := (connectOptions{}).tlsConfig(); cfg != nil || err != nil {
		t.Errorf("no TLS options gave %v, %v; want nil (the system pool)", cfg, err)
	}
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		opt  ConnectOption
		want string
	}{
		{WithCA(filepath.Join(dir, "missing.pem")), "reading the CA file"},
		{WithCA(garbage), "holds no PEM certificate"},
		{WithClientCertificate(certFile, garbage), "loading the client certificate"},
	} {
		o := applied(t, tt.opt)
		if _, err := o.tlsConfig(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("tlsConfig = %v, want it to say %q", err, tt.want)
		}
	}
}

func TestCredentialProviders(t *testing.T) {
	t.Setenv("ACEMQ_USER", "svc")
	t.Setenv("ACEMQ_PASS", "s3cret")
	user, pass, err := CredentialsFromEnv("ACEMQ_USER", "ACEMQ_PASS")(context.Background())
	if user != "svc" || pass != "s3cret" || err != nil {
		t.Errorf("from env: %q %q %v", user, pass, err)
	}
	if _, _, err := CredentialsFromEnv("ACEMQ_NO_SUCH_VAR", "ACEMQ_PASS")(context.Background()); err == nil || !strings.Contains(err.Error(), "ACEMQ_NO_SUCH_VAR") {
		t.Errorf("an empty variable: %v", err)
	}

	dir := t.TempDir()
	userFile, passFile := filepath.Join(dir, "username"), filepath.Join(dir, "password")
	provider := CredentialsFromFiles(userFile, passFile)
	if _, _, err := provider(context.Background()); err == nil {
		t.Error("missing files gave no error")
	}
	for _, rotated := range []string{"first", "second"} { // read again on every connect
		_ = os.WriteFile(userFile, []byte("svc\n"), 0o600)
		_ = os.WriteFile(passFile, []byte(rotated+"\n"), 0o600)
		if user, pass, err := provider(context.Background()); user != "svc" || pass != rotated || err != nil {
			t.Errorf("from files: %q %q %v, want svc %q", user, pass, err, rotated)
		}
	}
}

// A password never appears in an error or in String.
func TestConnectKeepsThePasswordSecret(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, url := range []string{
		"amqp://svc:hunter2@127.0.0.1:1/", // nothing listens on port 1
		"http://svc:hunter2@localhost/",
		"amqp://svc:hunter2@local host/",
	} {
		_, err := Connect(ctx, url)
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Connect(%s) = %v; want an error without the password", strings.ReplaceAll(url, "hunter2", "***"), err)
		}
	}
}

func TestWithFallbackURLs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// New (memory:// among others) does not take WithFallbackURLs, a
	// ConnectOption: TestMisplacedOptionsDoNotCompile.
	if _, err := Connect(ctx, "amqp://127.0.0.1:1/", WithFallbackURLs("memory://x")); !errors.Is(err, ErrInvalidOption) || !strings.Contains(err.Error(), "WithFallbackURLs") {
		t.Errorf("WithFallbackURLs(memory://x) = %v; want ErrInvalidOption naming the option", err)
	}
	urls := []string{"amqp://b:5672/", "amqps://c:5671/"}
	o := applied(t, WithFallbackURLs(urls[0]), WithFallbackURLs(urls[1]), WithConnectionName("svc"))
	ro, err := o.rabbitMQOptions()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ro.Addresses, urls) || ro.ConnectionName != "svc" {
		t.Errorf("rabbitmq.Options: Addresses %q, ConnectionName %q; want %q, svc", ro.Addresses, ro.ConnectionName, urls)
	}
}

// WithDevelopmentCertificates reaches the transport; that only Connect takes
// it is TestMisplacedOptionsDoNotCompile's.
func TestWithDevelopmentCertificates(t *testing.T) {
	for _, c := range []struct {
		opts []ConnectOption
		want bool
	}{{nil, false}, {[]ConnectOption{WithDevelopmentCertificates()}, true}} {
		ro, err := applied(t, c.opts...).rabbitMQOptions()
		if err != nil {
			t.Fatal(err)
		}
		if ro.AllowDevelopmentCertificates != c.want {
			t.Errorf("%d options: AllowDevelopmentCertificates = %v, want %v", len(c.opts), ro.AllowDevelopmentCertificates, c.want)
		}
	}
}

// Connect dials RabbitMQ only: memory:// is the in-process broker, which a
// service that never uses it does not link, and the error says how to reach
// it.
func TestConnectSendsMemoryToNew(t *testing.T) {
	_, err := Connect(t.Context(), "memory://orders")
	if err == nil || !strings.Contains(err.Error(), "acemq.New") || !strings.Contains(err.Error(), "memory.NewBroker().Connect()") {
		t.Fatalf("Connect(memory://orders) = %v; want an error that points at acemq.New and package memory", err)
	}
	b := memory.NewBroker()
	defer b.Close()
	conn, err := New(b.Connect())
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := New(nil); err == nil {
		t.Error("New(nil) made a Conn")
	}
}

// closings counts the EventConnectionClosed it is told.
type closings struct {
	NopObserver
	n atomic.Int64
}

func (c *closings) Event(e Event) {
	if e.Kind == EventConnectionClosed {
		c.n.Add(1)
	}
}

func TestConnCloseTwiceTellsOnce(t *testing.T) {
	var obs closings
	conn, err := New(memory.NewBroker().Connect(), WithObserver(&obs))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := conn.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
	}
	if n := obs.n.Load(); n != 1 {
		t.Errorf("EventConnectionClosed told %d times, want once", n)
	}
}

// applied is the connection options opts give Connect.
func applied(t *testing.T, opts ...ConnectOption) connectOptions {
	t.Helper()
	var o options
	if err := configure(&o, opts, ConnectOption.connectSetting, "test"); err != nil {
		t.Fatal(err)
	}
	return o.conn
}

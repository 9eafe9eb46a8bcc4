package main

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acemq-go/acemq/internal/devcert"
)

// certs writes the five files, prints their directory and the
// rabbitmq.conf lines naming them, and refuses to write over them without
// --force.
func TestCerts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	r := run(t, "", "certs", "--out", dir, "--host", "rabbit.dev.test,10.1.2.3")
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	for _, want := range []string{
		"development certificates in " + dir,
		"for localhost, 127.0.0.1, ::1, rabbit.dev.test, 10.1.2.3",
		"ssl_options.cacertfile = " + filepath.Join(dir, devcert.CAFile),
		"ssl_options.certfile = " + filepath.Join(dir, devcert.ServerCertFile),
		"ssl_options.keyfile = " + filepath.Join(dir, devcert.ServerKeyFile),
		"acemq.WithDevelopmentCertificates()",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout does not say %q:\n%s", want, r.stdout)
		}
	}
	for _, f := range []string{devcert.CAFile, devcert.ServerCertFile, devcert.ServerKeyFile, devcert.ClientCertFile, devcert.ClientKeyFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	before, err := os.ReadFile(filepath.Join(dir, devcert.ServerKeyFile))
	if err != nil {
		t.Fatal(err)
	}

	r = run(t, "", "certs", "--out", dir)
	if r.code != exitFailure || !strings.Contains(r.stderr, "already holds ca_certificate.pem") || !strings.Contains(r.stderr, "--force") {
		t.Errorf("again without --force: exit %d, stderr %q", r.code, r.stderr)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, devcert.ServerKeyFile)); string(after) != string(before) {
		t.Error("refused, but the key was replaced")
	}

	if r = run(t, "", "certs", "--out", dir, "--force"); r.code != exitOK {
		t.Fatalf("--force: exit %d, stderr %q", r.code, r.stderr)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, devcert.ServerKeyFile)); string(after) == string(before) {
		t.Error("--force kept the old key")
	}
}

func TestCertsBadHost(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	r := run(t, "", "certs", "--out", dir, "--host", "amqps://rabbit:5671")
	if r.code != exitFailure || !strings.Contains(r.stderr, `acemq: "amqps://rabbit:5671": a host is a DNS name`) {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the directory was made (%v)", err)
	}
}

// The connecting verbs refuse a development certificate unless
// --allow-dev-certs (or ACEMQ_ALLOW_DEV_CERTS) allows it, and say how;
// --ca (or ACEMQ_CA) trusts its CA. The listener, a Go TLS listener with
// the certificates certs wrote, does the handshake, counts it when it
// passed (the client sends its Finished only once it accepted the
// certificate), and hangs up, so the command then fails however the
// hang-up reaches it.
func TestConnectingWithDevelopmentCertificates(t *testing.T) {
	dir := t.TempDir()
	if r := run(t, "", "certs", "--out", dir); r.code != exitOK {
		t.Fatalf("certs: %s", r.stderr)
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, devcert.ServerCertFile), filepath.Join(dir, devcert.ServerKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	handshakes := make(chan error, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			handshakes <- c.(*tls.Conn).Handshake()
			_ = c.Close()
		}
	}()
	url := "amqps://guest:guest@" + ln.Addr().String() + "/"
	ca := filepath.Join(dir, devcert.CAFile)
	purge := []string{"dlq", "purge", "q.dlq", "--yes", "--timeout", "10s", "--url", url}

	r := run(t, "", append(purge, "--ca", ca)...)
	if r.code != exitFailure || !strings.Contains(r.stderr, "is a development certificate, refused") ||
		!strings.Contains(r.stderr, "for this command: --allow-dev-certs or ACEMQ_ALLOW_DEV_CERTS=true") {
		t.Errorf("without --allow-dev-certs: exit %d, stderr %q", r.code, r.stderr)
	}
	if err := <-handshakes; err == nil {
		t.Error("without --allow-dev-certs: the handshake passed")
	}
	allowed := func(name string, r result) {
		t.Helper()
		if err := <-handshakes; err != nil {
			t.Errorf("%s: the handshake failed: %v (stderr %q)", name, err, r.stderr)
		}
		if r.code != exitFailure || strings.Contains(r.stderr, "development certificate") {
			t.Errorf("%s: exit %d, stderr %q; want a failure after the handshake (the hang-up), not the refusal", name, r.code, r.stderr)
		}
	}
	allowed("--allow-dev-certs --ca", run(t, "", append(purge, "--ca", ca, "--allow-dev-certs")...))

	t.Setenv("ACEMQ_CA", ca)
	t.Setenv("ACEMQ_ALLOW_DEV_CERTS", "true")
	allowed("the environment", run(t, "", purge...))

	t.Setenv("ACEMQ_ALLOW_DEV_CERTS", "maybe")
	if r := run(t, "", purge...); r.code != exitFailure || !strings.Contains(r.stderr, `ACEMQ_ALLOW_DEV_CERTS="maybe": use true or false`) {
		t.Errorf("ACEMQ_ALLOW_DEV_CERTS=maybe: exit %d, stderr %q", r.code, r.stderr)
	}

	// The TLS environment does not reach memory://, which has no TLS.
	t.Setenv("ACEMQ_ALLOW_DEV_CERTS", "true")
	if r := run(t, "", "demo", "--messages", "3"); r.code != exitOK {
		t.Errorf("demo on memory:// with ACEMQ_CA set: exit %d, stderr %q", r.code, r.stderr)
	}
}

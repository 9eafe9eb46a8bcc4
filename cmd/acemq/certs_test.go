package main

import (
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

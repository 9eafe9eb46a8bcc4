package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/internal/devcert"
	"github.com/acemq-go/acemq/internal/testing/reachtest"
	"github.com/acemq-go/acemq/transport"
)

// TestRealTLSListener: the connecting verbs, on the amqps:// listener of
// `make test`'s test nodes (see the root package's test of the same name), refuse
// its development certificate without --allow-dev-certs and work with it.
func TestRealTLSListener(t *testing.T) {
	url, dir := os.Getenv("ACEMQ_TEST_TLS_URL"), os.Getenv("ACEMQ_TEST_TLS_CERTS")
	if url == "" || dir == "" {
		reachtest.Unavailable(t, "broker", "ACEMQ_TEST_TLS_URL and ACEMQ_TEST_TLS_CERTS are not set, so there is no TLS listener to test against; run `make test`, whose test nodes have one")
	}
	ca := filepath.Join(dir, devcert.CAFile)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := connect(ctx, url, "", nil, acemq.WithCA(ca), acemq.WithDevelopmentCertificates())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var b [4]byte
	_, _ = rand.Read(b[:])
	q := "acemq.test.tls." + hex.EncodeToString(b[:]) + ".dlq"
	if err := conn.Transport().DeclareQueue(ctx, transport.Queue{Name: q, Type: transport.Classic, Durable: true}); err != nil {
		t.Fatal(err)
	}
	defer conn.Transport().DeleteQueue(context.Background(), q)

	purge := []string{"dlq", "purge", q, "--yes", "--url", url, "--ca", ca}
	r := run(t, "", purge...)
	if r.code != exitFailure || !strings.Contains(r.stderr, "development certificate, refused") || !strings.Contains(r.stderr, "--allow-dev-certs") {
		t.Errorf("without --allow-dev-certs: exit %d, stderr %q", r.code, r.stderr)
	}
	t.Log(r.stderr)
	r = run(t, "", append(purge, "--allow-dev-certs")...)
	if want := "purged " + q + ": 0 messages deleted\n"; r.code != exitOK || r.stdout != want {
		t.Errorf("with --allow-dev-certs: exit %d, stdout %q (want %q), stderr %q", r.code, r.stdout, want, r.stderr)
	}
}

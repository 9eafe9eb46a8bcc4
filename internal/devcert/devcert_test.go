package devcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/contract"
)

func parse(t *testing.T, pemBytes []byte) *x509.Certificate {
	t.Helper()
	block, rest := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE" || len(rest) != 0 {
		t.Fatalf("not one PEM certificate: %q", pemBytes)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The set: a CA that vouches for a broker certificate valid for the local
// names and the extra hosts and for a client certificate, all marked in
// their O, ECDSA P-256, valid for Validity.
func TestGenerate(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s, err := Generate([]string{"rabbit.dev.test", "*.dev.test", "10.0.0.7", "LOCALHOST"}, now)
	if err != nil {
		t.Fatal(err)
	}
	wantHosts := []string{"localhost", "127.0.0.1", "::1", "rabbit.dev.test", "*.dev.test", "10.0.0.7"}
	if !slices.Equal(s.Hosts, wantHosts) {
		t.Errorf("Hosts = %q, want %q", s.Hosts, wantHosts)
	}
	ca, server, client := parse(t, s.CA), parse(t, s.ServerCert), parse(t, s.ClientCert)
	for name, c := range map[string]*x509.Certificate{"CA": ca, "server": server, "client": client} {
		if !slices.Equal(c.Subject.Organization, []string{contract.DevelopmentCertificateMarker}) {
			t.Errorf("%s: O = %q, want the marker", name, c.Subject.Organization)
		}
		if !Marked(c) {
			t.Errorf("%s: not Marked", name)
		}
		if k, ok := c.PublicKey.(*ecdsa.PublicKey); !ok || k.Curve != elliptic.P256() {
			t.Errorf("%s: key %T, want ECDSA P-256", name, c.PublicKey)
		}
		if !c.NotAfter.Equal(now.Add(Validity)) || !c.NotBefore.Equal(now.Add(-backdate)) {
			t.Errorf("%s: valid %s to %s, want %s to %s", name, c.NotBefore, c.NotAfter, now.Add(-backdate), now.Add(Validity))
		}
	}
	if !ca.IsCA || server.IsCA || client.IsCA {
		t.Errorf("IsCA: CA %v, server %v, client %v", ca.IsCA, server.IsCA, client.IsCA)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	for _, host := range []string{"localhost", "127.0.0.1", "::1", "rabbit.dev.test", "other.dev.test", "10.0.0.7"} {
		if _, err := server.Verify(x509.VerifyOptions{Roots: roots, DNSName: host, CurrentTime: now}); err != nil {
			t.Errorf("the broker certificate for %s: %v", host, err)
		}
	}
	if _, err := server.Verify(x509.VerifyOptions{Roots: roots, DNSName: "rabbit.example.com", CurrentTime: now}); err == nil {
		t.Error("the broker certificate verified for a host it was not made for")
	}
	if _, err := client.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("the client certificate: %v", err)
	}
	if client.Subject.CommonName != ClientName {
		t.Errorf("client CN = %q, want %q", client.Subject.CommonName, ClientName)
	}
	for name, pair := range map[string][2][]byte{"server": {s.ServerCert, s.ServerKey}, "client": {s.ClientCert, s.ClientKey}} {
		if _, err := tls.X509KeyPair(pair[0], pair[1]); err != nil {
			t.Errorf("%s: the key does not go with the certificate: %v", name, err)
		}
		if block, _ := pem.Decode(pair[1]); block == nil || block.Type != "PRIVATE KEY" {
			t.Errorf("%s: the key is not a PKCS #8 PEM block", name)
		}
	}
}

func TestGenerateRefusesBadHosts(t *testing.T) {
	_, err := Generate([]string{"ok.test", "rabbit:5671", "amqps://rabbit", "", "a b", "-x.test"}, time.Now())
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`"rabbit:5671"`, `"amqps://rabbit"`, `""`, `"a b"`, `"-x.test"`, "without a scheme or a port"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v: does not name %s", err, want)
		}
	}
	if strings.Contains(err.Error(), "ok.test") {
		t.Errorf("%v: names a good host", err)
	}
}

func TestWrite(t *testing.T) {
	s, err := Generate(nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "certs")
	paths, err := s.Write(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]os.FileMode{CAFile: 0o644, ServerCertFile: 0o644, ServerKeyFile: 0o600, ClientCertFile: 0o644, ClientKeyFile: 0o600}
	if len(paths) != len(want) {
		t.Errorf("paths %q, want %d", paths, len(want))
	}
	for name, mode := range want {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("%s: mode %v, want %v", name, fi.Mode().Perm(), mode)
		}
	}

	// Without replace: refused, naming the file, nothing written.
	again, err := Generate(nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, CAFile)); err != nil {
		t.Fatal(err)
	}
	_, err = again.Write(dir, false)
	exists, ok := errors.AsType[*ExistsError](err)
	if !ok || !slices.Equal(exists.Names, []string{ServerCertFile, ServerKeyFile, ClientCertFile, ClientKeyFile}) || exists.Dir != dir {
		t.Fatalf("Write over existing files = %v, want an ExistsError naming them", err)
	}
	if _, err := os.Stat(filepath.Join(dir, CAFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused Write wrote %s (%v)", CAFile, err)
	}

	// With replace: a key left readable by all is 0600 again.
	if err := os.Chmod(filepath.Join(dir, ServerKeyFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := again.Write(dir, true); err != nil {
		t.Fatal(err)
	}
	key, err := os.ReadFile(filepath.Join(dir, ServerKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if string(key) != string(again.ServerKey) {
		t.Error("the key was not replaced")
	}
	if fi, _ := os.Stat(filepath.Join(dir, ServerKeyFile)); fi.Mode().Perm() != 0o600 {
		t.Errorf("replaced key: mode %v, want 0600", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(want) {
		t.Errorf("%d entries in the directory, want %d (no temporary file left)", len(entries), len(want))
	}
}

// selfSigned is a certificate with the subject and issuer given.
func selfSigned(t *testing.T, subject, issuer pkix.Name) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	parent := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: issuer}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: subject, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The marker anywhere in the subject or the issuer, in any case, marks a
// certificate; anything else does not.
func TestMarked(t *testing.T) {
	plain := pkix.Name{CommonName: "rabbit.prod", Organization: []string{"Acme"}}
	m := contract.DevelopmentCertificateMarker
	for _, c := range []struct {
		name            string
		subject, issuer pkix.Name
		want            bool
	}{
		{"plain", plain, plain, false},
		{"almost", pkix.Name{Organization: []string{"ACEMQ DEVELOPMENT ONLY"}}, plain, false},
		{"O", pkix.Name{Organization: []string{m}}, plain, true},
		{"OU", pkix.Name{OrganizationalUnit: []string{m}}, plain, true},
		{"within CN, lower case", pkix.Name{CommonName: "localhost (" + strings.ToLower(m) + ")"}, plain, true},
		{"issuer only", plain, pkix.Name{Organization: []string{m}}, true},
	} {
		if got := Marked(selfSigned(t, c.subject, c.issuer)); got != c.want {
			t.Errorf("%s: Marked = %v, want %v", c.name, got, c.want)
		}
	}
}

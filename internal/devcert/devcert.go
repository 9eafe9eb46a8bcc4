// Package devcert makes the development certificates of `acemq certs` (a
// CA, a broker certificate and a client certificate, every one marked
// contract.DevelopmentCertificateMarker) and says whether a certificate
// carries the marker, which is what a connection refuses unless
// development certificates are allowed.
package devcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/acemq-go/acemq/contract"
)

// The files a Set is written to, named as RabbitMQ's ssl_options and its
// TLS guide name them.
const (
	CAFile         = "ca_certificate.pem"
	ServerCertFile = "server_certificate.pem"
	ServerKeyFile  = "server_key.pem"
	ClientCertFile = "client_certificate.pem"
	ClientKeyFile  = "client_key.pem"
)

// Validity is how long the certificates are valid from their making: long
// enough for local work, short enough that one that escapes into a real
// deployment stops working soon.
const Validity = 90 * 24 * time.Hour

// backdate starts a certificate's validity this long before it was made,
// so that a broker whose clock is a little behind accepts it at once.
const backdate = time.Hour

// The subjects' common names. The marker is their Organization.
const (
	caName     = "AceMQ development CA"
	serverName = "AceMQ development broker"
	// ClientName is the client certificate's CN: the user name RabbitMQ's
	// certificate login (rabbitmq_auth_mechanism_ssl) would take from it.
	ClientName = "acemq-dev-client"
)

// DefaultHosts are the names and addresses every broker certificate is
// valid for; Generate adds the hosts it is given.
var DefaultHosts = []string{"localhost", "127.0.0.1", "::1"}

// Set is a CA with a broker (server) and a client certificate it signed,
// PEM-encoded. The CA's key is not kept: nothing else can ever be signed
// by it, and a new set is made by generating again.
type Set struct {
	CA                    []byte
	ServerCert, ServerKey []byte
	ClientCert, ClientKey []byte
	Hosts                 []string  // what the broker certificate is valid for
	NotBefore, NotAfter   time.Time // the validity of all three
}

// Generate makes a Set valid from now for Validity, with a broker
// certificate for DefaultHosts and hosts (DNS names, wildcards such as
// *.dev.test, or IP addresses). The keys are ECDSA P-256: what every TLS
// stack of the family (Go, Erlang's ssl for RabbitMQ, Java, .NET, Python
// and Ruby's OpenSSL) reads, small, and made at once.
func Generate(hosts []string, now time.Time) (*Set, error) {
	dns, ips, all, err := parseHosts(append(slices.Clone(DefaultHosts), hosts...))
	if err != nil {
		return nil, err
	}
	s := &Set{Hosts: all, NotBefore: now.Add(-backdate).UTC().Truncate(time.Second), NotAfter: now.Add(Validity).UTC().Truncate(time.Second)}

	ca := s.template(caName)
	ca.IsCA, ca.BasicConstraintsValid, ca.MaxPathLenZero = true, true, true
	ca.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	caCert, caKey, err := issue(ca, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("devcert: the CA: %w", err)
	}
	s.CA = certPEM(caCert)

	server := s.template(serverName)
	server.KeyUsage = x509.KeyUsageDigitalSignature
	server.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	server.DNSNames, server.IPAddresses = dns, ips
	if s.ServerCert, s.ServerKey, err = issuePEM(server, caCert, caKey); err != nil {
		return nil, fmt.Errorf("devcert: the broker certificate: %w", err)
	}

	client := s.template(ClientName)
	client.KeyUsage = x509.KeyUsageDigitalSignature
	client.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if s.ClientCert, s.ClientKey, err = issuePEM(client, caCert, caKey); err != nil {
		return nil, fmt.Errorf("devcert: the client certificate: %w", err)
	}
	return s, nil
}

// template is a certificate named cn, marked, with a random serial number
// and the set's validity.
func (s *Set) template(cn string) *x509.Certificate {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail (Go 1.24 and later)
	}
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn, Organization: []string{contract.DevelopmentCertificateMarker}},
		NotBefore:    s.NotBefore,
		NotAfter:     s.NotAfter,
	}
}

// issue makes a key and the certificate tmpl for it, signed by parent's
// key, or by its own when parent is nil (a CA).
func issue(tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	return cert, key, nil
}

// issuePEM is issue's certificate and key as PEM: the key as a PKCS #8
// "PRIVATE KEY" block, which Go, Erlang and OpenSSL all read.
func issuePEM(tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (cert, key []byte, err error) {
	c, k, err := issue(tmpl, parent, parentKey)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, nil, err
	}
	return certPEM(c), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

func certPEM(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

// dnsName is a host name, or a wildcard over one (*.dev.test): labels of
// letters, digits and hyphens, not starting or ending with a hyphen.
var dnsName = regexp.MustCompile(`^(\*\.)?([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)*[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$`)

// parseHosts splits hosts into DNS names and IP addresses, each once, in
// order, and refuses what is neither.
func parseHosts(hosts []string) (dns []string, ips []net.IP, all []string, err error) {
	seen := map[string]bool{}
	var bad []string
	for _, h := range hosts {
		h = strings.TrimSpace(h)
		key := strings.ToLower(h)
		if ip := net.ParseIP(h); ip != nil {
			key = ip.String()
			if !seen[key] {
				ips = append(ips, ip)
			}
		} else if h != "" && len(h) <= 253 && dnsName.MatchString(h) {
			if !seen[key] {
				dns = append(dns, key)
			}
		} else {
			bad = append(bad, fmt.Sprintf("%q", h))
			continue
		}
		if !seen[key] {
			seen[key] = true
			all = append(all, key)
		}
	}
	if len(bad) > 0 {
		return nil, nil, nil, fmt.Errorf("devcert: %s: a host is a DNS name (such as rabbit.dev.test or *.dev.test) or an IP address, without a scheme or a port", strings.Join(bad, ", "))
	}
	return dns, ips, all, nil
}

// File is one file of a Set.
type File struct {
	Name string
	Data []byte
	Mode fs.FileMode // 0600 for a key, 0644 for a certificate
}

// Files are the Set's files, the CA first.
func (s *Set) Files() []File {
	return []File{
		{CAFile, s.CA, 0o644},
		{ServerCertFile, s.ServerCert, 0o644},
		{ServerKeyFile, s.ServerKey, 0o600},
		{ClientCertFile, s.ClientCert, 0o644},
		{ClientKeyFile, s.ClientKey, 0o600},
	}
}

// ExistsError is Write's error when files are there already and it may
// not replace them.
type ExistsError struct {
	Dir   string
	Names []string // the files there, in Files' order
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("devcert: %s already holds %s", e.Dir, strings.Join(e.Names, ", "))
}

// Write writes the Set's files into dir, made if missing, and returns
// their paths. It replaces files already there only when replace is set;
// otherwise it writes nothing and its error (an *ExistsError) names
// them. Each file is written beside its place and renamed into it, so a
// replaced key gets its mode (0600) whatever the old file's was.
func (s *Set) Write(dir string, replace bool) ([]string, error) {
	files := s.Files()
	var there []string
	for _, f := range files {
		if _, err := os.Lstat(filepath.Join(dir, f.Name)); err == nil {
			there = append(there, f.Name)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("devcert: %w", err)
		}
	}
	if len(there) > 0 && !replace {
		return nil, &ExistsError{Dir: dir, Names: there}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("devcert: %w", err)
	}
	var paths []string
	for _, f := range files {
		path := filepath.Join(dir, f.Name)
		if err := writeFile(path, f.Data, f.Mode); err != nil {
			return paths, fmt.Errorf("devcert: writing %s: %w", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

func writeFile(path string, data []byte, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Marked reports whether cert carries contract.DevelopmentCertificateMarker
// in any attribute of its subject or its issuer, in any case: this
// library's certificates carry it as their O, and another library's may
// carry it as their CN or OU. A certificate issued by a marked CA is
// marked, even when the broker does not send the CA.
func Marked(cert *x509.Certificate) bool {
	marker := strings.ToUpper(contract.DevelopmentCertificateMarker)
	for _, names := range [][]pkix.AttributeTypeAndValue{cert.Subject.Names, cert.Issuer.Names} {
		for _, n := range names {
			if v, ok := n.Value.(string); ok && strings.Contains(strings.ToUpper(v), marker) {
				return true
			}
		}
	}
	return false
}

package rabbitmq

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/transporttest"
)

// testCtx bounds every wait of a test; none of them asserts a duration.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// dial connects to the test broker (url "" means brokertest.URL) under a
// connection name of the test's own and closes the Transport at the end.
func dial(t *testing.T, url string, opts Options) *Transport {
	t.Helper()
	if url == "" {
		url = brokertest.URL(t)
	}
	if opts.ConnectionName == "" {
		opts.ConnectionName = brokertest.UniqueName(t, "conn")
	}
	tr, err := Dial(testCtx(t), url, opts)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	return tr
}

// classicQueue declares a durable classic queue named for the test.
func classicQueue(t *testing.T, tr *Transport, args transport.Table) string {
	t.Helper()
	name := brokertest.UniqueName(t, "q")
	q := transport.Queue{Name: name, Type: transport.Classic, Durable: true, Arguments: args}
	if err := tr.DeclareQueue(testCtx(t), q); err != nil {
		t.Fatalf("DeclareQueue: %v", err)
	}
	return name
}

func publish(t *testing.T, tr *Transport, queue, id string) {
	t.Helper()
	ctx := testCtx(t)
	c, err := tr.Publish(ctx, transport.Publishing{RoutingKey: queue, Mandatory: true,
		Message: transport.Message{MessageID: id, Persistent: true, Body: []byte(id)}})
	if err != nil {
		t.Fatalf("Publish %s: %v", id, err)
	}
	if err := c.Wait(ctx); err != nil {
		t.Fatalf("confirmation of %s: %v", id, err)
	}
}

func receive(t *testing.T, ctx context.Context, s transport.Subscription) transport.Delivery {
	t.Helper()
	select {
	case d, ok := <-transporttest.Chan(s):
		if !ok {
			t.Fatal("Deliveries closed")
		}
		return d
	case <-ctx.Done():
		t.Fatalf("no delivery: %v", ctx.Err())
	}
	panic("unreachable")
}

// eventually polls cond (a broker-side state) until it holds or ctx ends.
func eventually(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// withUser replaces the URL's user and password.
func withUser(t *testing.T, raw, user, pass string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(user, pass)
	return u.String()
}

// logBuffer collects log lines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// proxy forwards connections to the broker, optionally terminating TLS. It
// reads the broker's side frame by frame, so a test can drop what the broker
// sends (publisher confirms never arrive) or slip a frame of its own in
// between (connection.blocked).
type proxy struct {
	ln     net.Listener
	target string
	wg     sync.WaitGroup

	mu    sync.Mutex
	conns []*proxyConn
}

type proxyConn struct {
	client, server net.Conn
	writeMu        sync.Mutex // whole frames to the client
	drop           atomic.Bool
}

func startProxy(t *testing.T, tlsConfig *tls.Config) *proxy {
	t.Helper()
	u, err := url.Parse(brokertest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
	}
	p := &proxy{ln: ln, target: u.Host}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		_ = ln.Close()
		p.closeConns()
		p.wg.Wait()
	})
	return p
}

// url is the proxy's AMQP URL, with the broker's test credentials.
func (p *proxy) url(t *testing.T, scheme string) string {
	u, _ := url.Parse(brokertest.URL(t))
	u.Scheme = scheme
	u.Host = p.ln.Addr().String()
	return u.String()
}

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			client.Close()
			continue
		}
		c := &proxyConn{client: client, server: server}
		p.mu.Lock()
		p.conns = append(p.conns, c)
		p.mu.Unlock()
		p.wg.Add(2)
		go func() {
			defer p.wg.Done()
			_, _ = io.Copy(server, client)
			server.Close()
			client.Close()
		}()
		go func() {
			defer p.wg.Done()
			c.pump()
			server.Close()
			client.Close()
		}()
	}
}

// pump copies the broker's frames to the client, one whole frame at a time.
func (c *proxyConn) pump() {
	for {
		var head [7]byte
		if _, err := io.ReadFull(c.server, head[:]); err != nil {
			return
		}
		frame := make([]byte, 7+int(binary.BigEndian.Uint32(head[3:]))+1)
		copy(frame, head[:])
		if _, err := io.ReadFull(c.server, frame[7:]); err != nil {
			return
		}
		if c.drop.Load() {
			continue
		}
		c.writeMu.Lock()
		_, err := c.client.Write(frame)
		c.writeMu.Unlock()
		if err != nil {
			return
		}
	}
}

func (p *proxy) each(f func(*proxyConn)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		f(c)
	}
}

// dropFromBroker discards, on the open connections, whatever the broker sends.
func (p *proxy) dropFromBroker() { p.each(func(c *proxyConn) { c.drop.Store(true) }) }

// closeConns cuts the open connections, as a network failure would.
func (p *proxy) closeConns() {
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, c := range conns {
		c.client.Close()
		c.server.Close()
	}
}

// inject sends a connection-level method frame (channel 0) to the clients,
// as if the broker had sent it.
func (p *proxy) inject(classID, methodID uint16, args []byte) {
	payload := binary.BigEndian.AppendUint16(nil, classID)
	payload = binary.BigEndian.AppendUint16(payload, methodID)
	payload = append(payload, args...)
	frame := []byte{1, 0, 0}
	frame = binary.BigEndian.AppendUint32(frame, uint32(len(payload)))
	frame = append(frame, payload...)
	frame = append(frame, 0xCE)
	p.each(func(c *proxyConn) {
		c.writeMu.Lock()
		defer c.writeMu.Unlock()
		_, _ = c.client.Write(frame)
	})
}

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

var serial atomic.Int64

func newCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(serial.Add(1)),
		Subject:               pkix.Name{CommonName: "acemq test CA " + t.Name()},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// issue makes a certificate for the given DNS names and IPs (a server) or,
// with none, for a client.
func (ca *testCA) issue(t *testing.T, cn string, dnsNames []string, ips ...net.IP) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	usage := x509.ExtKeyUsageServerAuth
	if len(dnsNames) == 0 && len(ips) == 0 {
		usage = x509.ExtKeyUsageClientAuth
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)),
		Subject:      pkix.Name{CommonName: cn},
		DNSNames:     dnsNames,
		IPAddresses:  ips,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// Package console is the dead-letter console: a web front, for a browser,
// on the same engine as `acemq dlq` and `acemq topology diff` (packages
// deadletter and admin). It shows every source queue with a dead-letter
// queue or a retry ladder, a queue's dead letters and why they were set
// aside, replays, parks, purges, exports and imports them (each behind a
// confirmation that says what will happen to how many messages, then with
// live progress), and compares a topology file with the broker.
//
// The pages are rendered on the server; the one script (static/job.js)
// follows a running job and the page works without it. Every response
// carries a strict Content-Security-Policy; no request from another site
// is served but a link to the overview; every POST must carry its
// caller's CSRF token, within a bounded body; nothing that changes a queue
// is done on a GET. Served anywhere but a loopback address it needs
// credentials, and TLS for them (CheckListen). Every action, sign-in and
// sign-out is written to the audit log (Config.Logger).
package console

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/admin"
	"github.com/acemq-go/acemq/console/preview"
	"github.com/acemq-go/acemq/internal/httpguard"
)

// Config is what a console serves and how it lets people in.
type Config struct {
	// Conn is the broker's connection; the console does not close it.
	Conn *acemq.Conn
	// Endpoint is the broker's management API, for the queues' names,
	// depths and rates, and for the topology comparison.
	Endpoint admin.Endpoint
	// Bodies reads message bodies for their previews; nil reads those that
	// need nothing given (no keyring, schema, registry or claim store).
	Bodies *preview.Reader
	// ReadOnly refuses every action that changes a queue.
	ReadOnly bool
	// Token, when set, lets in a request with "Authorization: Bearer
	// Token", or a browser that gave it on the login page.
	Token string
	// User and Password, when set, let in a request with basic auth.
	User, Password string
	// Topology is the path of a topology file to compare with the broker
	// (the drift page also takes an upload).
	Topology string
	// Now is the clock for ages, sessions and throttling; nil is time.Now.
	Now func() time.Time
	// Logger takes the audit log (every action, sign-in and sign-out) and
	// the refused requests; nil is slog.Default().
	Logger *slog.Logger
	// MaxImport is the largest export file an import takes, in bytes; 0 is
	// DefaultMaxImport.
	MaxImport int64
	// TLSCert and TLSKey are the PEM files of the console's certificate and
	// key: when set, Serve serves HTTPS.
	TLSCert, TLSKey string
	// InsecureHTTP lets a console with credentials serve plain HTTP beyond
	// the loopback interface (behind a TLS-terminating proxy elsewhere), with
	// a warning logged.
	InsecureHTTP bool
	// PageTimeout bounds a page's broker work: a page whose broker does
	// not answer by then says what is wrong instead. 0 is
	// DefaultPageTimeout.
	PageTimeout time.Duration
	// Services are the services whose consumers the Consumers page shows
	// and controls (pause, resume, rescale), through their actuators.
	Services []Service
}

// hasCredentials says whether c lets in only those who show something.
func (c Config) hasCredentials() bool { return c.Token != "" || (c.User != "" && c.Password != "") }

// ErrNoCredentials refuses a console listening beyond the loopback
// interface without credentials.
var ErrNoCredentials = errors.New("the console listens beyond this machine, so it needs credentials: set ACEMQ_CONSOLE_TOKEN, or ACEMQ_CONSOLE_USER and ACEMQ_CONSOLE_PASSWORD, or listen on 127.0.0.1")

// CheckListen refuses addr (host:port) unless it is a loopback address,
// or c has credentials and either TLS or InsecureHTTP. An empty host or
// 0.0.0.0 is every interface: not loopback.
func CheckListen(addr string, c Config) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %q: want host:port, such as 127.0.0.1:8080: %w", addr, err)
	}
	if c.User != "" && c.Password == "" || c.User == "" && c.Password != "" {
		return errors.New("basic auth needs both ACEMQ_CONSOLE_USER and ACEMQ_CONSOLE_PASSWORD")
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("--tls-cert and --tls-key go together: give both, or neither")
	}
	switch {
	case httpguard.IsLoopback(host):
		return nil
	case !c.hasCredentials():
		return fmt.Errorf("--listen %s: %w", addr, ErrNoCredentials)
	case c.TLSCert == "" && !c.InsecureHTTP:
		return fmt.Errorf("--listen %s: %w", addr, ErrPlainHTTP)
	}
	return nil
}

// ErrPlainHTTP refuses a console whose credentials would cross the network
// in clear.
var ErrPlainHTTP = errors.New("the console listens beyond this machine over plain HTTP, where its token or password would cross the network in clear: give it --tls-cert and --tls-key (acemq certs makes development ones), or listen on 127.0.0.1 behind a TLS-terminating proxy, or accept the risk with --insecure-http")

// Server is a console's HTTP handler.
type Server struct {
	c        Config
	mux      *http.ServeMux
	csrf     string // the forms' token of a console without sessions (no credentials, or basic auth)
	sessions *sessions
	throttle *throttle
	log      *slog.Logger
	tls      *tls.Config // nil: plain HTTP
	jobs     *jobs
	uploads  *uploads
	// gates and snapshots coordinate the views and moves of each queue
	// (gate.go, snapshot.go); counted are the purges confirmed.
	gates     gates
	snapshots snapshots
	counted   counted
	// ctx is the jobs' context: they outlive the request that started
	// them, and end with Close.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New returns the console of c. Close ends its running jobs.
func New(c Config) (*Server, error) {
	if c.Conn == nil {
		return nil, errors.New("console: Config.Conn is nil")
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.PageTimeout <= 0 {
		c.PageTimeout = DefaultPageTimeout
	}
	if c.Bodies == nil {
		r, err := preview.New(preview.Options{})
		if err != nil {
			return nil, err
		}
		c.Bodies = r
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.MaxImport <= 0 {
		c.MaxImport = DefaultMaxImport
	}
	if err := checkServices(c.Services); err != nil {
		return nil, err
	}
	var tc *tls.Config
	if c.TLSCert != "" || c.TLSKey != "" {
		cert, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("console: --tls-cert %s, --tls-key %s: %w", c.TLSCert, c.TLSKey, err)
		}
		tc = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{c: c, csrf: randomHex(), sessions: newSessions(), throttle: newThrottle(), log: c.Logger, tls: tc,
		jobs: newJobs(), uploads: newUploads(), ctx: ctx, cancel: cancel}
	s.jobs.blocked = s.blockedReason
	s.routes()
	s.warnPlainTokens()
	return s, nil
}

// Close stops the running jobs (each finishes the messages in hand, as a
// Ctrl-C of the CLI does), waits for them and removes the files they left.
func (s *Server) Close() error {
	s.cancel()
	s.wg.Wait()
	s.jobs.removeFiles()
	s.uploads.removeAll()
	return nil
}

// Scheme is how the console is reached: https with TLSCert, else http.
func (s *Server) Scheme() string {
	if s.tls != nil {
		return "https"
	}
	return "http"
}

// Serve serves s on l until ctx ends, then shuts down gracefully: over
// TLS when the Config has a certificate.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, TLSConfig: s.tls,
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
	if s.tls == nil && s.c.hasCredentials() {
		if host, _, err := net.SplitHostPort(l.Addr().String()); err == nil && !httpguard.IsLoopback(host) {
			s.log.Warn("INSECURE: the console takes its credentials over plain HTTP beyond this machine (--insecure-http): "+
				"anyone on the network path can read the token or password. Serve it with --tls-cert and --tls-key, or on 127.0.0.1 behind a TLS-terminating proxy.",
				"listen", l.Addr().String())
		}
	}
	stopped := make(chan error, 1)
	go func() {
		if s.tls != nil {
			stopped <- hs.ServeTLS(l, "", "")
			return
		}
		stopped <- hs.Serve(l)
	}()
	select {
	case err := <-stopped:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return hs.Shutdown(sctx)
	}
}

func randomHex() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

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
// carries a strict Content-Security-Policy; every POST must carry the
// page's CSRF token and come from the console's own origin; nothing that
// changes a queue is done on a GET. Served anywhere but a loopback address
// it needs credentials (CheckListen).
package console

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/admin"
	"github.com/acemq-go/acemq/internal/preview"
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
	// Now is the clock for ages; nil is time.Now.
	Now func() time.Time
	// PageTimeout bounds a page's broker work: a page whose broker does
	// not answer by then says what is wrong instead. 0 is
	// DefaultPageTimeout.
	PageTimeout time.Duration
}

// hasCredentials says whether c lets in only those who show something.
func (c Config) hasCredentials() bool { return c.Token != "" || (c.User != "" && c.Password != "") }

// ErrNoCredentials refuses a console listening beyond the loopback
// interface without credentials.
var ErrNoCredentials = errors.New("the console listens beyond this machine, so it needs credentials: set ACEMQ_CONSOLE_TOKEN, or ACEMQ_CONSOLE_USER and ACEMQ_CONSOLE_PASSWORD, or listen on 127.0.0.1")

// CheckListen refuses addr (host:port) unless it is a loopback address or
// c has credentials. An empty host or 0.0.0.0 is every interface: not
// loopback.
func CheckListen(addr string, c Config) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %q: want host:port, such as 127.0.0.1:8080: %w", addr, err)
	}
	if c.User != "" && c.Password == "" || c.User == "" && c.Password != "" {
		return errors.New("basic auth needs both ACEMQ_CONSOLE_USER and ACEMQ_CONSOLE_PASSWORD")
	}
	if c.hasCredentials() || isLoopback(host) {
		return nil
	}
	return fmt.Errorf("--listen %s: %w", addr, ErrNoCredentials)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Server is a console's HTTP handler.
type Server struct {
	c       Config
	mux     *http.ServeMux
	csrf    string // every form's token
	session string // the login cookie's value
	jobs    *jobs
	uploads *uploads
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
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{c: c, csrf: randomHex(), session: randomHex(), jobs: newJobs(), uploads: newUploads(), ctx: ctx, cancel: cancel}
	s.jobs.blocked = s.blockedReason
	s.routes()
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

// Serve serves s on l until ctx ends, then shuts down gracefully.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	stopped := make(chan error, 1)
	go func() { stopped <- hs.Serve(l) }()
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

package actuator

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/acemq-go/acemq/contract"
)

// ShutdownTimeout is how long Serve lets requests in progress finish once
// its context ends.
const ShutdownTimeout = 5 * time.Second

// Server serves a handler on a listener of its own. Listen binds at once,
// so that a taken port fails before anything else starts and URL says
// where it listens before it serves.
type Server struct {
	listener net.Listener
}

// Listen binds addr, contract.DefaultActuatorAddress (127.0.0.1:9464,
// loopback only) when it is "". A port of 0 takes a free one: URL says
// which.
func Listen(addr string) (*Server, error) {
	if addr == "" {
		addr = contract.DefaultActuatorAddress
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("actuator: %w", err)
	}
	return &Server{listener: l}, nil
}

// Addr is the address the Server listens on.
func (s *Server) Addr() net.Addr { return s.listener.Addr() }

// URL is the Server's base URL, such as http://127.0.0.1:9464.
func (s *Server) URL() string { return "http://" + s.listener.Addr().String() }

// Serve answers with h until ctx ends, then stops accepting, lets the
// requests in progress finish (ShutdownTimeout at most) and returns nil;
// or returns the error serving failed with. It closes the listener either
// way.
func (s *Server) Serve(ctx context.Context, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	failed := make(chan error, 1)
	go func() { failed <- srv.Serve(s.listener) }()
	select {
	case err := <-failed:
		return fmt.Errorf("actuator: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	err := srv.Shutdown(shutdown)
	if served := <-failed; !errors.Is(served, http.ErrServerClosed) && err == nil {
		err = served
	}
	if err != nil {
		return fmt.Errorf("actuator: shutting down: %w", err)
	}
	return nil
}

// Close closes the listener of a Server that will not serve.
func (s *Server) Close() error { return s.listener.Close() }

// ListenAndServe listens on addr (Listen) and serves h until ctx ends
// (Serve).
func ListenAndServe(ctx context.Context, addr string, h http.Handler) error {
	s, err := Listen(addr)
	if err != nil {
		return err
	}
	return s.Serve(ctx, h)
}

package rabbitmq

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// socket is a connection's TCP socket, under amqp091 (and under TLS for
// amqps://), which lets a run of publishes go out in one write: amqp091
// flushes every publish to the socket on its own, and that write, on both
// sides of the socket, is much of what a confirmed publish costs.
//
// While the publisher writes a publish that another follows at once (the
// caller said so with transport.Publishing.More, or another caller's is
// already waiting its turn), what amqp091 flushes is held back. Held
// bytes go out, in order, with the next write that is not held, when a
// publish's Confirmation is waited on (Release), when more than maxHeld
// would be held, or heldFor after holding began, whichever comes first: a
// batch's own work between two publishes (its codec, its interceptors)
// never keeps them back for long. Another frame written while the publish
// is (an ack, a heartbeat) is held with it, as briefly.
type socket struct {
	net.Conn
	holding atomic.Bool // a publish to hold back is being written

	mu      sync.Mutex
	held    []byte
	heldFor time.Duration
	timer   *time.Timer // Release, heldFor after held began to fill
	err     error       // the first failed send: later writes fail with it
}

// A publish is held back a millisecond at most, and no more than 64 KiB.
const (
	heldFor = time.Millisecond
	maxHeld = 64 << 10
)

// newSocket wraps c, holding bytes back for d at most (heldFor but in
// tests).
func newSocket(c net.Conn, d time.Duration) *socket {
	s := &socket{Conn: c, heldFor: d}
	s.timer = time.AfterFunc(time.Hour, s.Release)
	s.timer.Stop()
	return s
}

// hold holds back what is written until hold(false): the publisher holds
// while it writes a publish that another follows at once.
func (s *socket) hold(on bool) { s.holding.Store(on) }

func (s *socket) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return 0, s.err
	}
	if s.holding.Load() && len(s.held)+len(b) <= maxHeld {
		if len(s.held) == 0 {
			s.timer.Reset(s.heldFor)
		}
		s.held = append(s.held, b...)
		return len(b), nil
	}
	if len(s.held) == 0 {
		return s.Conn.Write(b)
	}
	s.timer.Stop()
	bufs := net.Buffers{s.held, b} // one writev
	_, err := bufs.WriteTo(s.Conn)
	s.held = s.held[:0]
	if err != nil {
		s.fail(err)
		return 0, err
	}
	return len(b), nil
}

// Release sends what is held back, now.
func (s *socket) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.held) == 0 || s.err != nil {
		return
	}
	s.timer.Stop()
	_, err := s.Conn.Write(s.held)
	s.held = s.held[:0]
	if err != nil {
		s.fail(err)
	}
}

// fail keeps err for every later write and closes the socket: amqp091
// wrote what was held without an error, so its reader must be the one to
// find the connection gone (and fail the publishes in flight on it, not
// confirmed).
func (s *socket) fail(err error) {
	s.err = err
	_ = s.Conn.Close()
}

// Close drops what is held (its publishes are lost with the connection,
// not confirmed) and closes the socket.
func (s *socket) Close() error {
	s.mu.Lock()
	s.timer.Stop()
	s.held = nil
	s.mu.Unlock()
	return s.Conn.Close()
}

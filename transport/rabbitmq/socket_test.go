package rabbitmq

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// socketPair is a socket over loopback TCP and the peer that reads what it
// sends; the socket holds for heldFor at most.
func socketPair(t *testing.T, heldFor time.Duration) (*socket, net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	s := newSocket(c, heldFor)
	t.Cleanup(func() { _ = s.Close(); _ = peer.Close() })
	return s, peer
}

// readPeer reads exactly n bytes at the peer, failing the test when they do
// not come within 10s.
func readPeer(t *testing.T, peer net.Conn, n int) string {
	t.Helper()
	_ = peer.SetReadDeadline(time.Now().Add(10 * time.Second))
	b := make([]byte, n)
	if _, err := io.ReadFull(peer, b); err != nil {
		t.Fatalf("reading %d bytes at the peer: %v", n, err)
	}
	return string(b)
}

func writeSocket(t *testing.T, s *socket, b string) {
	t.Helper()
	if n, err := s.Write([]byte(b)); n != len(b) || err != nil {
		t.Fatalf("Write(%q) = %d, %v", b, n, err)
	}
}

func heldNow(s *socket) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.held)
}

// What is written while holding waits for the next write that is not, and
// goes out before it, in order.
func TestSocketSendsHeldWithTheNextWrite(t *testing.T) {
	s, peer := socketPair(t, time.Hour) // never on its own here
	s.hold(true)
	writeSocket(t, s, "one,")
	writeSocket(t, s, "two,")
	s.hold(false)
	if got := heldNow(s); got != "one,two," {
		t.Fatalf("held %q after two held writes, want both", got)
	}
	writeSocket(t, s, "three")
	if got := heldNow(s); got != "" {
		t.Errorf("still held after a write that is not: %q", got)
	}
	if got := readPeer(t, peer, len("one,two,three")); got != "one,two,three" {
		t.Errorf("the peer received %q", got)
	}
}

func TestSocketRelease(t *testing.T) {
	s, peer := socketPair(t, time.Hour) // never on its own here
	s.hold(true)
	writeSocket(t, s, "held")
	s.hold(false)
	s.Release()
	if got := heldNow(s); got != "" {
		t.Errorf("still held after Release: %q", got)
	}
	if got := readPeer(t, peer, 4); got != "held" {
		t.Errorf("the peer received %q", got)
	}
	s.Release() // nothing held: nothing sent, no error
	writeSocket(t, s, "next")
	if got := readPeer(t, peer, 4); got != "next" {
		t.Errorf("the peer received %q after an empty Release", got)
	}
}

// Held bytes go out on their own when nothing follows them (heldFor).
func TestSocketSendsHeldBytesOnItsOwn(t *testing.T) {
	s, peer := socketPair(t, heldFor)
	s.hold(true)
	writeSocket(t, s, "alone")
	// Still holding: the bytes must go out all the same.
	if got := readPeer(t, peer, 5); got != "alone" {
		t.Errorf("the peer received %q", got)
	}
}

// No more than maxHeld is held: a write that would pass it goes out at
// once, with what was held before it.
func TestSocketHoldsAtMostMaxHeld(t *testing.T) {
	s, peer := socketPair(t, time.Hour) // never on its own here
	s.hold(true)
	first := strings.Repeat("a", maxHeld)
	writeSocket(t, s, first)
	if got := len(heldNow(s)); got != maxHeld {
		t.Fatalf("held %d bytes, want %d", got, maxHeld)
	}
	writeSocket(t, s, "b")
	if got := heldNow(s); got != "" {
		t.Fatalf("held %d bytes past maxHeld, want them sent", len(got))
	}
	if got := readPeer(t, peer, maxHeld+1); got != first+"b" {
		t.Errorf("the peer received %d bytes ending %q", len(got), got[len(got)-3:])
	}
}

// A send of held bytes that fails closes the socket, so that amqp091's
// reader finds the connection gone (amqp091 took those writes for done),
// and every later write fails with the first error.
func TestSocketFailedSendClosesIt(t *testing.T) {
	local, remote := net.Pipe()
	s := newSocket(local, time.Hour)
	defer s.Close()
	s.hold(true)
	writeSocket(t, s, "held")
	_ = remote.Close() // the peer is gone: the pipe's writes fail
	s.Release()
	_, err := s.Write([]byte("after"))
	if !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("Write after a failed send = %v, want the send's error", err)
	}
	if _, err := local.Read(make([]byte, 1)); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("reading the socket after a failed send: %v, want it closed", err)
	}
	if got := heldNow(s); got != "" {
		t.Errorf("held %q after the failed send", got)
	}
}

// Writes that are not held go straight through, whatever their size.
func TestSocketWritesThroughWhenNotHolding(t *testing.T) {
	s, peer := socketPair(t, time.Hour) // never on its own here
	big := bytes.Repeat([]byte("x"), 3*maxHeld)
	done := make(chan error, 1)
	go func() { _, err := s.Write(big); done <- err }()
	if got := readPeer(t, peer, len(big)); got != string(big) {
		t.Errorf("the peer received %d bytes, want %d", len(got), len(big))
	}
	if err := <-done; err != nil {
		t.Errorf("Write: %v", err)
	}
	if got := heldNow(s); got != "" {
		t.Errorf("held %d bytes without holding", len(got))
	}
}

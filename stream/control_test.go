package stream_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/stream"
)

// A stream consumer paused and resumed through its Conn (its id is the
// stream's name) reads on from where it was: what was sent ahead when it
// paused is read again, nothing is skipped, and the pause is no failure.
func TestPauseAndResume(t *testing.T) {
	brokers(t, func(t *testing.T, conn *acemq.Conn, name string) {
		publish(t, conn, name, 0, 50)
		var mu sync.Mutex
		seen := map[int64]bool{}
		count := func() int {
			mu.Lock()
			defer mu.Unlock()
			return len(seen)
		}
		// The handler holds offset 5 until the pause has handed back what
		// was sent ahead of it.
		release := make(chan struct{})
		c, err := stream.Consume(t.Context(), conn, name, func(_ context.Context, m stream.Message[event]) acemq.Decision {
			if m.Offset == 5 {
				<-release
			}
			mu.Lock()
			defer mu.Unlock()
			seen[m.Offset] = true
			return acemq.Accept()
		}, stream.Options{Offset: stream.First()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close(context.Background()) })
		u := conn.Consumer(name)
		if u == nil {
			t.Fatalf("no consumer of id %s on the Conn", name)
		}
		waitUntil(t, "five read", func() bool { return count() == 5 })
		paused := make(chan error, 1)
		go func() { paused <- u.Pause(t.Context()) }()
		waitUntil(t, "what was sent ahead handed back", func() bool { return u.Stats().Requeued > 0 })
		close(release)
		if err := <-paused; err != nil {
			t.Fatal(err)
		}
		publish(t, conn, name, 50, 50)
		if err := u.Resume(t.Context()); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "all 100 read", func() bool { return count() == 100 })
		select {
		case <-c.Done():
			t.Errorf("the consumer stopped: %v", c.Err())
		default:
		}
	})
}

// waitUntil polls cond for up to 30 seconds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

package stream_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/brokerversion"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/internal/testing/conntest"
	"github.com/acemq-go/acemq/stream"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
)

func TestRenderMaxAge(t *testing.T) {
	for d, want := range map[time.Duration]string{
		7 * 24 * time.Hour: "7D", 6 * time.Hour: "6h", 36 * time.Hour: "36h", 30 * time.Minute: "30m",
		45 * time.Second: "45s", 90 * time.Second: "90s", 1500 * time.Millisecond: "1s", 48 * time.Hour: "2D",
	} {
		if got, ok := contract.RenderMaxAge(d); !ok || got != want {
			t.Errorf("RenderMaxAge(%s) = %q, %t; want %q", d, got, ok, want)
		}
	}
	if got, ok := contract.RenderMaxAge(999 * time.Millisecond); ok {
		t.Errorf("RenderMaxAge(999ms) = %q, want none", got)
	}
}

func TestSpec(t *testing.T) {
	s := stream.Spec{Name: "events", MaxAge: 7 * 24 * time.Hour, MaxLengthBytes: 1 << 30}
	args := s.Arguments()
	if args[contract.ArgMaxAge] != "7D" || args[contract.ArgMaxLengthBytes] != int64(1<<30) || len(args) != 2 {
		t.Errorf("Arguments = %v; want x-max-age 7D and x-max-length-bytes as a long, nothing else", args)
	}
	s.MaxSegmentSizeBytes = 1 << 20
	if s.Arguments()[contract.ArgMaxSegmentSize] != int64(1<<20) {
		t.Errorf("Arguments = %v; want the segment size when asked", s.Arguments())
	}
	if q := s.QueueSpec(); q.Type != transport.Stream || q.Name != "events" {
		t.Errorf("QueueSpec = %+v", q)
	}
	err := stream.Spec{MaxAge: time.Millisecond, MaxLengthBytes: -1}.Validate()
	for _, want := range []string{"no name", "at least 1s", "-1 bytes"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v; want it to say %q", err, want)
		}
	}
}

func TestConsumeRefusesBadOptions(t *testing.T) {
	conn := acemqtest.NewBroker(t).Connect(t)
	h := func(context.Context, stream.Message[string]) acemq.Decision { return acemq.Accept() }
	for _, c := range []struct {
		o    stream.Options
		want string
	}{
		{stream.Options{Offset: stream.At(-1)}, "negative"},
		{stream.Options{Offset: stream.Interval(time.Millisecond)}, "under a second"},
		{stream.Options{Prefetch: -1}, "prefetch"},
		{stream.Options{OnFailure: 9}, "failure policy"},
	} {
		if _, err := stream.Consume(t.Context(), conn, "s", h, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Consume with %+v = %v; want it to say %q", c.o, err, c.want)
		}
	}
}

// brokers runs test on memory:// (real time, for the timestamps) and on
// the test broker, with a stream declared for it, deleted when t ends.
func brokers(t *testing.T, test func(t *testing.T, conn *acemq.Conn, name string)) {
	t.Run("memory", func(t *testing.T) {
		b := memory.NewBroker()
		t.Cleanup(b.Close)
		conn, err := acemq.New(b.Connect())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		test(t, conn, declare(t, conn, "events"))
	})
	t.Run("rabbitmq", func(t *testing.T) {
		conn, name := rabbit(t)
		test(t, conn, name)
	})
}

// rabbit connects to the test broker and declares a stream.
func rabbit(t *testing.T) (*acemq.Conn, string) {
	t.Helper()
	conn := conntest.Connect(t, brokertest.URL(t), t.Name())
	return conn, declare(t, conn, brokertest.UniqueName(t, "stream"))
}

// declare declares the stream name (a day's retention, 1 GiB), deleted
// with its dead-letter half when t ends.
func declare(t *testing.T, conn *acemq.Conn, name string) string {
	t.Helper()
	if err := (stream.Spec{Name: name, MaxAge: 24 * time.Hour, MaxLengthBytes: 1 << 30}).Declare(t.Context(), conn); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{name, contract.DeadLetterQueue(name), contract.ParkedQueue(name)} {
		t.Cleanup(func() { _, _ = conn.DeleteQueue(context.Background(), q) })
	}
	return name
}

// Another library's rendering of the same x-max-age (seconds, as Java and
// .NET write it) is refused up to RabbitMQ 4.2, which compares the text,
// and accepted from 4.3, which compares the duration; a different
// retention is refused by every version, 4.3 naming both in milliseconds.
func TestMaxAgeRedeclare(t *testing.T) {
	brokers(t, func(t *testing.T, conn *acemq.Conn, name string) {
		v, err := brokerversion.Parse(conn.State().ServerVersion)
		if err != nil {
			t.Fatal(err)
		}
		if err := (stream.Spec{Name: name, MaxAge: 24 * time.Hour, MaxLengthBytes: 1 << 30}).Declare(t.Context(), conn); err != nil {
			t.Errorf("declaring the stream again the same way: %v", err)
		}
		redeclare := func(age string) error {
			return acemq.Topology{Queues: []acemq.QueueSpec{{Name: name, Type: transport.Stream,
				Arguments: acemq.Table{contract.ArgMaxAge: age, contract.ArgMaxLengthBytes: int64(1 << 30)}}}}.Apply(t.Context(), conn)
		}
		refused := func(err error, received, current string) bool {
			return errors.Is(err, transport.ErrPreconditionFailed) && strings.Contains(err.Error(), "inequivalent arg 'x-max-age'") &&
				strings.Contains(err.Error(), "received '"+received+"' but current is '"+current+"'")
		}
		err = redeclare("86400s")
		switch {
		case v.ComparesMaxAgeAsText() && !refused(err, "86400s", "1D"):
			t.Errorf("RabbitMQ %s: declaring it with x-max-age 86400s: %v; want PRECONDITION_FAILED naming x-max-age", v, err)
		case !v.ComparesMaxAgeAsText() && err != nil:
			t.Errorf("RabbitMQ %s: declaring it with x-max-age 86400s, the same day: %v; want it accepted", v, err)
		}
		received, current := "3600s", "1D"
		if !v.ComparesMaxAgeAsText() {
			received, current = "3600000", "86400000"
		}
		if err := redeclare("3600s"); !refused(err, received, current) {
			t.Errorf("RabbitMQ %s: declaring it with x-max-age 3600s: %v; want PRECONDITION_FAILED naming x-max-age, %s and %s", v, err, received, current)
		}
	})
}

type event struct {
	N int `json:"n"`
}

// publish sends n messages, each confirmed before the next (so each is a
// chunk of its own), numbered from start.
func publish(t *testing.T, conn *acemq.Conn, name string, start, n int) {
	t.Helper()
	pub, err := acemq.NewPublisher[event](conn, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := start; i < start+n; i++ {
		if err := pub.Publish(t.Context(), name, event{N: i}); err != nil {
			t.Fatal(err)
		}
	}
}

// read consumes name from o until it has handled want messages, and
// returns the offsets and bodies it saw.
func read(t *testing.T, conn *acemq.Conn, name string, o stream.Options, want int, h func(stream.Message[event]) error) (offsets, bodies []int) {
	t.Helper()
	var mu sync.Mutex
	enough := make(chan struct{})
	c, err := stream.Consume(t.Context(), conn, name, func(_ context.Context, m stream.Message[event]) acemq.Decision {
		if h != nil {
			if err := h(m); err != nil {
				return acemq.Reject(err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		offsets, bodies = append(offsets, int(m.Offset)), append(bodies, m.Body.N)
		if len(offsets) == want {
			close(enough)
		}
		return acemq.Accept()
	}, o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close(context.Background()) }()
	select {
	case <-enough:
	case <-time.After(10 * time.Second):
		t.Fatalf("from %s: %d of %d messages within 10s", o.Offset, len(offsets), want)
	}
	mu.Lock()
	defer mu.Unlock()
	return offsets[:want:want], bodies[:want:want]
}

// Reading from each kind of offset: first, last, next, an absolute offset,
// a timestamp and an interval; each delivery's offset on its message.
func TestOffsets(t *testing.T) {
	brokers(t, func(t *testing.T, conn *acemq.Conn, name string) {
		publish(t, conn, name, 0, 3)
		// Timestamps are whole seconds: the next two messages are written
		// after a second boundary that the first three were written before.
		boundary := time.Now().Truncate(time.Second).Add(time.Second)
		time.Sleep(time.Until(boundary))
		publish(t, conn, name, 3, 2)
		for _, c := range []struct {
			o    stream.Offset
			want string
		}{
			{stream.First(), "[0 1 2 3 4]"},
			{stream.Last(), "[4]"},
			{stream.At(2), "[2 3 4]"},
			{stream.Since(boundary), "[3 4]"},
			{stream.Interval(time.Hour), "[0 1 2 3 4]"},
		} {
			offsets, bodies := read(t, conn, name, stream.Options{Offset: c.o}, strings.Count(c.want, " ")+1, nil)
			if fmt.Sprint(offsets) != c.want || fmt.Sprint(bodies) != c.want {
				t.Errorf("from %s: offsets %v, bodies %v; want %s", c.o, offsets, bodies, c.want)
			}
		}
		// Next: only what is published once the consumer is there.
		var mu sync.Mutex
		var got []int64
		arrived := make(chan struct{}, 10)
		c, err := stream.Consume(t.Context(), conn, name, func(_ context.Context, m stream.Message[event]) acemq.Decision {
			mu.Lock()
			got = append(got, m.Offset)
			mu.Unlock()
			arrived <- struct{}{}
			return acemq.Accept()
		}, stream.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Close(context.Background()) }()
		publish(t, conn, name, 5, 1)
		select {
		case <-arrived:
		case <-time.After(10 * time.Second):
			t.Fatal("from next: nothing within 10s of a publish")
		}
		mu.Lock()
		if fmt.Sprint(got) != "[5]" {
			t.Errorf("from next: offsets %v, want [5]", got)
		}
		mu.Unlock()
	})
}

// Stop: a failure ends the consumer at its offset, which a consumer
// started At it reads again.
func TestStopOnFailure(t *testing.T) {
	brokers(t, func(t *testing.T, conn *acemq.Conn, name string) {
		publish(t, conn, name, 0, 5)
		var mu sync.Mutex
		var seen []int64
		c, err := stream.Consume(t.Context(), conn, name, func(_ context.Context, m stream.Message[event]) acemq.Decision {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, m.Offset)
			if m.Offset == 2 {
				return acemq.Reject(errors.New("no stock"))
			}
			return acemq.Accept()
		}, stream.Options{Offset: stream.First()})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-c.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("the consumer did not stop within 10s")
		}
		var stopped *stream.StoppedError
		if !errors.As(c.Err(), &stopped) || stopped.Offset != 2 || !strings.Contains(stopped.Error(), "no stock") {
			t.Fatalf("Err = %v; want a StoppedError at offset 2", c.Err())
		}
		if pos, ok := c.Position(); !ok || pos != 1 {
			t.Errorf("Position = %d, %t; want 1", pos, ok)
		}
		mu.Lock()
		if fmt.Sprint(seen) != "[0 1 2]" {
			t.Errorf("handled %v, want [0 1 2] and nothing after the failure", seen)
		}
		mu.Unlock()
		offsets, _ := read(t, conn, name, stream.Options{Offset: stream.At(stopped.Offset)}, 3, nil)
		if fmt.Sprint(offsets) != "[2 3 4]" {
			t.Errorf("consuming again from the stop: %v, want [2 3 4]", offsets)
		}
	})
}

// Skip: a failure is copied to S.dlq with its reason, an undecodable body
// to S.parked, and the consumer goes on.
func TestSkipOnFailure(t *testing.T) {
	brokers(t, func(t *testing.T, conn *acemq.Conn, name string) {
		publish(t, conn, name, 0, 2)
		if _, err := conn.Publish(t.Context(), "", name, transport.Message{ContentType: contract.ContentTypeJSON, Body: []byte("not json")}); err != nil {
			t.Fatal(err)
		}
		publish(t, conn, name, 3, 2)
		offsets, _ := read(t, conn, name, stream.Options{Offset: stream.First(), OnFailure: stream.Skip}, 3, func(m stream.Message[event]) error {
			if m.Body.N == 1 {
				return errors.New("no stock")
			}
			return nil
		})
		if fmt.Sprint(offsets) != "[0 3 4]" {
			t.Errorf("handled %v, want [0 3 4]", offsets)
		}
		for queue, want := range map[string]string{
			contract.DeadLetterQueue(name): "no stock",
			contract.ParkedQueue(name):     contract.ReasonTextUndecodable,
		} {
			d, ok, err := conn.Get(t.Context(), queue)
			if err != nil || !ok {
				t.Errorf("Get(%s) = %v, %v; want the message set aside", queue, ok, err)
				continue
			}
			if reason := fmt.Sprint(d.Headers[contract.HeaderError]); !strings.HasPrefix(reason, want) {
				t.Errorf("%s holds %q with the reason %q; want it to start %q", queue, d.Body, reason, want)
			}
			if _, ok := d.Headers[contract.ArgStreamOffset]; ok {
				t.Errorf("%s holds a copy with the stream's %s header", queue, contract.ArgStreamOffset)
			}
			_ = d.Ack()
		}
	})
}

// After a lost connection the consumer reads on after the last offset it
// handled, nothing twice.
func TestResumeAfterLostConnection(t *testing.T) {
	conn, name := rabbit(t)
	publish(t, conn, name, 0, 3)
	var mu sync.Mutex
	var seen []int64
	arrived := make(chan struct{}, 100)
	c, err := stream.Consume(t.Context(), conn, name, func(_ context.Context, m stream.Message[event]) acemq.Decision {
		mu.Lock()
		seen = append(seen, m.Offset)
		mu.Unlock()
		arrived <- struct{}{}
		return acemq.Accept()
	}, stream.Options{Offset: stream.First()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close(context.Background()) }()
	wait := func(n int) {
		for range n {
			select {
			case <-arrived:
			case <-time.After(20 * time.Second):
				t.Fatal("a message did not arrive within 20s")
			}
		}
	}
	wait(3)
	// The publisher has a connection of its own, which stays.
	publisher, err := acemq.Connect(t.Context(), brokertest.URL(t), acemq.WithConnectionName(t.Name()+"-publisher"))
	if err != nil {
		t.Fatal(err)
	}
	defer publisher.Close()
	brokertest.CloseConnections(t, t.Name())
	publish(t, publisher, name, 3, 2)
	wait(2)
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(seen) != "[0 1 2 3 4]" {
		t.Errorf("handled %v across the lost connection, want [0 1 2 3 4]", seen)
	}
}

// Package codectest is what the codec packages' tests share: the family's
// codec fixtures (testdata/fixtures/codec-interop.json) and a delivery of
// raw messages, published as another library would, to a typed consumer.
package codectest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/brokertest"
	"github.com/acemq-go/acemq/transport"
)

// Fixtures is codec-interop.json, as far as the codecs' tests read it.
type Fixtures struct {
	AvroSchema string   `json:"avro_schema"`
	Samples    []Sample `json:"samples"`
}

// Sample is one body another library wrote.
type Sample struct {
	Format      string          `json:"format"`
	Producer    string          `json:"producer"`
	ContentType string          `json:"content_type"`
	BodyBase64  string          `json:"body_base64"`
	Expected    json.RawMessage `json:"expected"`
	Body        []byte          `json:"-"`
}

// Load reads the fixtures from the module's testdata, found from the
// test's directory up.
func Load(t testing.TB) Fixtures {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("codectest: no go.mod above the test's directory")
		}
		dir = parent
	}
	raw, err := os.ReadFile(filepath.Join(dir, "testdata", "fixtures", "codec-interop.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f Fixtures
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	for i := range f.Samples {
		if f.Samples[i].Body, err = base64.StdEncoding.DecodeString(f.Samples[i].BodyBase64); err != nil {
			t.Fatalf("sample %d: %v", i, err)
		}
	}
	return f
}

// Of returns the samples of one format, failing t when there are none.
func (f Fixtures) Of(t testing.TB, format string) []Sample {
	t.Helper()
	var out []Sample
	for _, s := range f.Samples {
		if s.Format == format {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		t.Fatalf("codec-interop.json has no %s sample", format)
	}
	return out
}

// Memory is a connection to a fresh memory:// broker with queue declared.
func Memory(t *testing.T, queue string) *acemq.Conn {
	conn := acemqtest.NewBroker(t).Connect(t)
	declare(t, conn, queue)
	return conn
}

// RabbitMQ is a connection to the test broker (internal/brokertest) with
// queue declared, removed with its dead-letter queues when t ends.
func RabbitMQ(t *testing.T, queue string) *acemq.Conn {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := acemq.Connect(ctx, brokertest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	declare(t, conn, queue)
	t.Cleanup(func() {
		for _, q := range []string{queue, contract.DeadLetterQueue(queue), contract.ParkedQueue(queue)} {
			_, _ = conn.Transport().DeleteQueue(context.Background(), q)
		}
	})
	return conn
}

func declare(t *testing.T, conn *acemq.Conn, queue string) {
	t.Helper()
	if err := conn.Transport().DeclareQueue(context.Background(), transport.Queue{Name: queue, Type: transport.Classic, Durable: true}); err != nil {
		t.Fatal(err)
	}
}

// Outcome is what became of the messages Deliver published, by message id.
type Outcome[T any] struct {
	Accepted     map[string]T
	Parked       map[string]string // the reason, x-acemq-error
	DeadLettered map[string]string
}

// Deliver publishes msgs to queue with a raw client, as another library
// would (each needs a MessageID), consumes them with a typed consumer of
// codec under NoRetry, waits until every one is settled and says how.
func Deliver[T any](t *testing.T, conn *acemq.Conn, queue string, codec acemq.Codec, msgs []transport.Message) Outcome[T] {
	t.Helper()
	ctx := context.Background()
	out := Outcome[T]{Accepted: map[string]T{}, Parked: map[string]string{}, DeadLettered: map[string]string{}}
	var mu sync.Mutex
	c, err := acemq.Consume(ctx, conn, queue, func(_ context.Context, m acemq.Message[T]) acemq.Decision {
		mu.Lock()
		defer mu.Unlock()
		out.Accepted[m.Envelope.ID] = m.Body
		return acemq.Accept()
	}, acemq.WithCodec(codec), acemq.WithPolicy(acemq.NoRetry()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Close(context.Background()) })
	for _, m := range msgs {
		conf, err := conn.Transport().Publish(ctx, transport.Publishing{RoutingKey: queue, Mandatory: true, Message: m})
		if err == nil {
			err = conf.Wait(ctx)
		}
		if err != nil {
			t.Fatalf("publishing %s: %v", m.MessageID, err)
		}
	}
	acemqtest.WaitFor(t, c, "every message settled", func(s acemq.Stats) bool {
		return s.Accepted+s.Parked+s.DeadLettered == int64(len(msgs))
	})
	for queue, into := range map[string]map[string]string{contract.ParkedQueue(queue): out.Parked, contract.DeadLetterQueue(queue): out.DeadLettered} {
		for {
			d, ok, err := conn.Transport().Get(ctx, queue)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			into[d.MessageID] = acemq.ReadEnvelope(d.Message).Error
			_ = d.Ack()
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return out
}

package actuator_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/claimcheck"
	"github.com/acemq-go/acemq/encryption"
	"github.com/acemq-go/acemq/idempotency"
	"github.com/acemq-go/acemq/request"
	"github.com/acemq-go/acemq/schedule"
)

// capabilities reads /acemq-info's capabilities.
func capabilities(t *testing.T, base string) []string {
	t.Helper()
	r := do(t, http.MethodGet, base+"/acemq-info")
	info := decode[struct {
		Capabilities []string `json:"capabilities"`
	}](t, r)
	return info.Capabilities
}

// Every package of a capability is linked by this test: the info lists one
// only once the service uses it through the Conn, each use on a Conn of its
// own so that one does not hide another.
func TestInfoListsWhatTheServiceUses(t *testing.T) {
	every := []string{"at-least-once-rungs", "dead-letter-queues", "publisher-confirms", "retry-ladder"}
	b := acemqtest.NewBroker(t)
	ctx := t.Context()
	keyring, err := encryption.NewKeyring("k1", encryption.GenerateKey())
	if err != nil {
		t.Fatal(err)
	}
	claims, err := claimcheck.New(acemq.JSON, &claimcheck.Memory{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		use  func(t *testing.T, conn *acemq.Conn)
		want []string
	}{
		{"nothing", func(*testing.T, *acemq.Conn) {}, nil},
		{"a publisher of a plain codec", func(t *testing.T, conn *acemq.Conn) {
			if _, err := acemq.NewPublisher[string](conn, "", acemq.WithCodec(acemq.Text)); err != nil {
				t.Fatal(err)
			}
		}, nil},
		{"a request client", func(t *testing.T, conn *acemq.Conn) {
			c, err := request.NewClient(ctx, conn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Close(context.Background()) })
		}, []string{"request-reply"}},
		{"a scheduler", func(t *testing.T, conn *acemq.Conn) {
			if _, err := schedule.New(ctx, conn); err != nil {
				t.Fatal(err)
			}
		}, []string{"scheduler"}},
		{"a publisher of the encryption codec", func(t *testing.T, conn *acemq.Conn) {
			if _, err := acemq.NewPublisher[string](conn, "", acemq.WithCodec(encrypted(t, keyring))); err != nil {
				t.Fatal(err)
			}
		}, []string{"encryption"}},
		{"a consumer of the claim-check codec around the encryption codec, among others", func(t *testing.T, conn *acemq.Conn) {
			inner, err := claimcheck.New(encrypted(t, keyring), &claimcheck.Memory{})
			if err != nil {
				t.Fatal(err)
			}
			consume(t, conn, "reports", func(context.Context, acemq.Message[string]) acemq.Decision { return acemq.Accept() },
				acemq.WithCodec(acemq.Codecs(acemq.JSON, inner)))
		}, []string{"claim-check", "encryption"}},
		{"a publisher of the claim-check codec", func(t *testing.T, conn *acemq.Conn) {
			if _, err := acemq.NewPublisher[string](conn, "", acemq.WithCodec(claims)); err != nil {
				t.Fatal(err)
			}
		}, []string{"claim-check"}},
		{"an idempotent consumer, once it has handled a message", func(t *testing.T, conn *acemq.Conn) {
			h, err := idempotency.Handler(idempotency.NewMemory(nil), func(context.Context, acemq.Message[string]) acemq.Decision { return acemq.Accept() })
			if err != nil {
				t.Fatal(err)
			}
			c := consume(t, conn, "payments", h)
			if got := capabilities(t, serve(t, conn, nil)); slices.Contains(got, "idempotent-consumer") {
				t.Errorf("before its first message: %q, want no idempotent-consumer yet", got)
			}
			p, err := acemq.NewPublisher[string](conn, "")
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Publish(ctx, "payments", "p-1"); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(10 * time.Second); c.Stats().Accepted == 0; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the payment was not handled in 10 s: %+v", c.Stats())
				}
			}
		}, []string{"idempotent-consumer"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn := b.Connect(t)
			c.use(t, conn)
			want := slices.Sorted(slices.Values(append(slices.Clone(every), c.want...)))
			if got := capabilities(t, serve(t, conn, nil)); !slices.Equal(got, want) {
				t.Errorf("capabilities %q, want %q", got, want)
			}
		})
	}
}

// consume declares queue and consumes it with h until the test ends.
func consume[T any](t *testing.T, conn *acemq.Conn, queue string, h acemq.Handler[T], opts ...acemq.ConsumeOption) *acemq.Consumer {
	t.Helper()
	topology := acemq.Topology{Queues: []acemq.QueueSpec{{Name: queue, DeadLetter: true}}}
	if err := topology.Apply(t.Context(), conn); err != nil {
		t.Fatal(err)
	}
	c, err := acemq.Consume(t.Context(), conn, queue, h, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Close(context.Background()) })
	return c
}

// encrypted is JSON encrypted with keyring.
func encrypted(t *testing.T, keyring *encryption.Keyring) acemq.Codec {
	t.Helper()
	c, err := encryption.NewCodec(keyring, acemq.JSON)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

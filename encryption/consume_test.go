package encryption_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/encryption"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/internal/testing/deliverytest"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
)

// A typed consumer with the encrypted JSON codec reads what another library
// encrypted, published by a raw client (no envelope headers); a body under
// a key id it does not hold is parked with the contract's reason, naming the
// id and not the key. On memory:// as RabbitMQ 4.0 and 3.10, and on the
// RabbitMQ node of ACEMQ_TEST_URL.
func TestConsumeEncrypted(t *testing.T) {
	for _, version := range []string{"4.0", "3.10"} {
		t.Run("memory "+version, func(t *testing.T) {
			consumeEncrypted(t, deliverytest.Memory(t, "orders", memory.WithRabbitMQVersion(version)), "orders")
		})
	}
	t.Run("RabbitMQ", func(t *testing.T) {
		q := brokertest.UniqueName(t, "acemq.test.encryption")
		consumeEncrypted(t, deliverytest.RabbitMQ(t, q), q)
	})
}

func consumeEncrypted(t *testing.T, conn *acemq.Conn, q string) {
	ctx := context.Background()
	tr := conn.Transport()
	parked := contract.ParkedQueue(q)
	f := readInterop(t)
	got := make(chan order, 1)
	c, err := acemq.Consume(ctx, conn, q, func(_ context.Context, m acemq.Message[order]) acemq.Decision {
		got <- m.Body
		return acemq.Accept()
	}, acemq.WithCodec(newCodec(t, fixtureKeyring(t), acemq.JSON)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Close(context.Background()) })

	publishRaw := func(body []byte) {
		t.Helper()
		conf, err := tr.Publish(ctx, transport.Publishing{RoutingKey: q, Mandatory: true, Message: transport.Message{
			ContentType: contract.ContentTypeEncrypted, Persistent: true, MessageID: "raw", Body: body,
		}})
		if err == nil {
			err = conf.Wait(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range f.Samples {
		if s.Note != "a JSON body" {
			continue
		}
		publishRaw(s.Body)
		select {
		case o := <-got:
			if o != (order{"A-1", 1}) {
				t.Errorf("%s's body decoded as %+v", s.Library, o)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s's body: no delivery within 10s; the consumer's counts are %+v", s.Library, c.Stats())
		}
	}
	acemqtest.WaitFor(t, c, "three accepted", func(s acemq.Stats) bool { return s.Accepted == 3 })

	unknownKey := encryption.GenerateKey()
	other, err := encryption.NewKeyring("2099-01", unknownKey)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := newCodec(t, other, acemq.JSON).Marshal(order{"A-2", 2})
	publishRaw(body)
	acemqtest.WaitFor(t, c, "the unknown key's message parked", func(s acemq.Stats) bool { return s.Parked == 1 })
	d, ok, err := tr.Get(ctx, parked)
	if err != nil || !ok {
		t.Fatalf("%s: %v, %v", parked, ok, err)
	}
	_ = d.Ack()
	reason := acemq.ReadEnvelope(d.Message).Error
	want := `could not be decoded: encryption: unknown key id "2099-01" (the keyring holds "2026-01", "orders-2025-06-rotated-out")`
	if reason != want {
		t.Errorf("parked with %q, want %q", reason, want)
	}
	for _, form := range []string{base64.StdEncoding.EncodeToString(unknownKey), base64.StdEncoding.EncodeToString(unknownKey[:9])} {
		if strings.Contains(reason, form) {
			t.Errorf("the reason shows the key: %s", reason)
		}
	}
	if !bytes.Equal(d.Body, body) || d.ContentType != contract.ContentTypeEncrypted {
		t.Errorf("parked as %q, % x; want the body as published", d.ContentType, d.Body)
	}
	if s := c.Stats(); s.Accepted != 3 || s.Parked != 1 || s.DeadLettered != 0 || s.RetriedInConsumer != 0 {
		t.Errorf("the consumer's counts: %+v", s)
	}
}

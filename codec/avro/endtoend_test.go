package avro_test

import (
	"strings"
	"testing"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/internal/testing/codectest"
	"github.com/acemq-go/acemq/internal/testing/deliverytest"
	"github.com/acemq-go/acemq/transport"
)

// A typed consumer of each codec receives the family's bodies sent by a raw
// client under each content type it reads. What it does not read is parked
// naming the content type; a registered body whose schema id the registry
// does not hold is parked naming the id; one whose lookup finds the
// registry out of reach is retried (here under NoRetry: dead-lettered as
// exhausted, not parked).
func endToEnd(t *testing.T, conn func(t *testing.T, queue string) (*acemq.Conn, string)) {
	f := codectest.Load(t)
	msg := func(id, ct string, body []byte) transport.Message {
		return transport.Message{MessageID: id, ContentType: ct, Body: body, Persistent: true}
	}
	refused := func(out map[string]string, id, ct string) {
		t.Helper()
		if r := out[id]; !strings.HasPrefix(r, `could not be decoded: the content type "`+ct+`"`) {
			t.Errorf("%s: parked with %q, want it refused for its content type %q", id, r, ct)
		}
	}

	t.Run("fixed", func(t *testing.T) {
		s := f.Of(t, "avro")[0]
		c, q := conn(t, "fixed")
		out := deliverytest.Deliver[orderPlaced](t, c, q, fixed(t, f.AvroSchema), []transport.Message{
			msg("binary", s.ContentType, s.Body),
			msg("application", "application/avro", s.Body),
			msg("suffix", "application/vnd.acme.order+avro", s.Body),
			msg("registered type", "application/vnd.acemq.avro", f.Of(t, "avro-registered")[0].Body),
			msg("none", "", s.Body),
		})
		for _, id := range []string{"binary", "application", "suffix"} {
			if got, ok := out.Accepted[id]; !ok || got != expected(t, s) {
				t.Errorf("%s: received %+v (%v), want %+v", id, got, ok, expected(t, s))
			}
		}
		refused(out.Parked, "registered type", "application/vnd.acemq.avro")
		refused(out.Parked, "none", "")
	})

	t.Run("registered", func(t *testing.T) {
		s := f.Of(t, "avro-registered")[0]
		reg := newRegistry(f)
		reg.down[8] = true
		withID := func(id byte) []byte { b := []byte(string(s.Body)); b[4] = id; return b }
		c, q := conn(t, "registered")
		out := deliverytest.Deliver[orderPlaced](t, c, q, registered(t, f.AvroSchema, reg), []transport.Message{
			msg("registered", s.ContentType, s.Body),
			msg("application", "application/avro", s.Body),
			msg("unknown id", s.ContentType, withID(9)),
			msg("registry down", s.ContentType, withID(8)),
			msg("binary", "avro/binary", f.Of(t, "avro")[0].Body),
			msg("none", "", s.Body),
		})
		for _, id := range []string{"registered", "application"} {
			if got, ok := out.Accepted[id]; !ok || got != expected(t, s) {
				t.Errorf("%s: received %+v (%v), want %+v", id, got, ok, expected(t, s))
			}
		}
		if r := out.Parked["unknown id"]; !strings.HasPrefix(r, "could not be decoded: ") || !strings.Contains(r, "schema id 9") {
			t.Errorf("unknown id: parked with %q, want a decoding failure naming schema id 9", r)
		}
		if r, ok := out.DeadLettered["registry down"]; !ok || !strings.HasPrefix(r, "exhausted 1 attempt") || !strings.Contains(r, "unreachable") {
			t.Errorf("registry down: dead-lettered with %q (%v), want exhausted after its one attempt, naming the registry unreachable", r, ok)
		}
		refused(out.Parked, "binary", "avro/binary")
		refused(out.Parked, "none", "")
	})
}

func TestEndToEndOnMemory(t *testing.T) {
	endToEnd(t, func(t *testing.T, name string) (*acemq.Conn, string) { return deliverytest.Memory(t, name), name })
}

func TestEndToEndOnRabbitMQ(t *testing.T) {
	endToEnd(t, func(t *testing.T, name string) (*acemq.Conn, string) {
		q := brokertest.UniqueName(t, "acemq.test.avro."+name)
		return deliverytest.RabbitMQ(t, q), q
	})
}

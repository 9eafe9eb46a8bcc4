package protobuf_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/acemq-go/acemq/codec/protobuf"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/internal/testing/codectest"
	"github.com/acemq-go/acemq/internal/testing/deliverytest"
	"github.com/acemq-go/acemq/internal/testing/testpb"
	"github.com/acemq-go/acemq/transport"
)

// expected is a fixture's value of acemq.test.OrderPlaced.
func expected(t *testing.T, s codectest.Sample) *testpb.OrderPlaced {
	t.Helper()
	var e struct {
		OrderID    string `json:"order_id"`
		TotalCents int64  `json:"total_cents"`
		Tenant     string `json:"tenant"`
	}
	if err := json.Unmarshal(s.Expected, &e); err != nil {
		t.Fatal(err)
	}
	return &testpb.OrderPlaced{OrderId: e.OrderID, TotalCents: e.TotalCents, Tenant: e.Tenant}
}

// Every protobuf sample (the Go library's; the fixture notes that the
// Python runtime writes the same bytes) decodes to its value, into a
// generated message, through a typed consumer's **T and into a dynamic
// message; and the codec writes the sample's bytes.
func TestFixtures(t *testing.T) {
	for _, s := range codectest.Load(t).Of(t, "protobuf") {
		t.Run(s.Producer, func(t *testing.T) {
			want := expected(t, s)
			if !protobuf.Codec.Reads(s.ContentType) {
				t.Fatalf("the codec does not read the sample's %q", s.ContentType)
			}
			var got testpb.OrderPlaced
			if err := protobuf.Codec.Unmarshal(s.ContentType, s.Body, &got); err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(&got, want) {
				t.Errorf("decoded %v, want %v", &got, want)
			}
			var typed *testpb.OrderPlaced // what a Consume[*testpb.OrderPlaced] hands the codec
			if err := protobuf.Codec.Unmarshal(s.ContentType, s.Body, &typed); err != nil || !proto.Equal(typed, want) {
				t.Errorf("decoded through **OrderPlaced: %v, %v; want %v", typed, err, want)
			}
			dyn := dynamicpb.NewMessage(want.ProtoReflect().Descriptor())
			if err := protobuf.Codec.Unmarshal(s.ContentType, s.Body, dyn); err != nil {
				t.Fatal(err)
			}
			if got := dyn.Get(dyn.Descriptor().Fields().ByName("tenant")).String(); got != want.Tenant {
				t.Errorf("dynamic message's tenant %q, want %q", got, want.Tenant)
			}
			body, err := protobuf.Codec.Marshal(want)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(body, s.Body) {
				t.Errorf("Marshal wrote %x, the %s library %x", body, s.Producer, s.Body)
			}
		})
	}
}

func TestReads(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/x-protobuf":              true,
		"Application/X-Protobuf; proto=x":     true,
		"application/protobuf":                true,
		"application/vnd.google.protobuf":     true,
		"application/vnd.acme.order+protobuf": true,
		"application/+protobuf":               false,
		"":                                    false,
		"application/octet-stream":            false,
		"application/json":                    false,
		"application/x-protobuf-v2":           false,
		"not a type":                          false,
	} {
		if got := protobuf.Codec.Reads(ct); got != want {
			t.Errorf("Reads(%q) = %v, want %v", ct, got, want)
		}
	}
	if ct := protobuf.Codec.ContentType(); ct != "application/x-protobuf" {
		t.Errorf("ContentType() = %q", ct)
	}
}

func TestErrors(t *testing.T) {
	var nilMsg *testpb.OrderPlaced
	var nilDyn *dynamicpb.Message
	for name, v := range map[string]any{
		"a struct value":      testpb.OrderPlaced{},
		"nil":                 nil,
		"a nil message":       nilMsg,
		"a string":            "x",
		"a nil **OrderPlaced": (**testpb.OrderPlaced)(nil),
	} {
		if _, err := protobuf.Codec.Marshal(v); !errors.Is(err, protobuf.ErrNotMessage) {
			t.Errorf("Marshal(%s) = %v, want ErrNotMessage", name, err)
		}
		if err := protobuf.Codec.Unmarshal("application/x-protobuf", nil, v); !errors.Is(err, protobuf.ErrNotMessage) {
			t.Errorf("Unmarshal into %s = %v, want ErrNotMessage", name, err)
		}
	}
	// A dynamic message has no type to allocate from.
	if err := protobuf.Codec.Unmarshal("application/x-protobuf", nil, &nilDyn); !errors.Is(err, protobuf.ErrNotMessage) || !strings.Contains(err.Error(), "dynamicpb.NewMessage") {
		t.Errorf("Unmarshal into **dynamicpb.Message = %v, want ErrNotMessage naming dynamicpb.NewMessage", err)
	}
	if err := protobuf.Codec.Unmarshal("application/x-protobuf", nil, &dynamicpb.Message{}); !errors.Is(err, protobuf.ErrNotMessage) {
		t.Errorf("Unmarshal into a zero dynamicpb.Message = %v, want ErrNotMessage", err)
	}
	// Field 1 claims 100 bytes and has 1: not protobuf.
	var m *testpb.OrderPlaced
	err := protobuf.Codec.Unmarshal("application/x-protobuf", []byte{0x0a, 100, 'x'}, &m)
	if err == nil || !strings.Contains(err.Error(), "acemq.test.OrderPlaced") {
		t.Errorf("Unmarshal of a truncated body = %v, want an error naming the message", err)
	}
}

// A typed consumer with the codec receives the family's protobuf body sent
// by a raw client under each content type it reads; one without a content
// type or under another codec's is parked, naming what it was sent as.

func endToEnd(t *testing.T, deliver func([]transport.Message) deliverytest.Outcome[*testpb.OrderPlaced]) {
	s := codectest.Load(t).Of(t, "protobuf")[0]
	want := expected(t, s)
	msg := func(id, ct string) transport.Message {
		return transport.Message{MessageID: id, ContentType: ct, Body: s.Body, Persistent: true}
	}
	out := deliver([]transport.Message{
		msg("x-protobuf", s.ContentType),
		msg("ietf", "application/protobuf"),
		msg("suffix", "application/vnd.acme.order+protobuf"),
		msg("none", ""),
		msg("octets", "application/octet-stream"),
	})
	for _, id := range []string{"x-protobuf", "ietf", "suffix"} {
		if got, ok := out.Accepted[id]; !ok || !proto.Equal(got, want) {
			t.Errorf("%s: received %v (%v), want %v", id, got, ok, want)
		}
	}
	for id, ct := range map[string]string{"none": `""`, "octets": `"application/octet-stream"`} {
		if r := out.Parked[id]; !strings.HasPrefix(r, "could not be decoded: the content type "+ct) {
			t.Errorf("%s: parked with %q, want it refused for its content type %s", id, r, ct)
		}
	}
}

func TestEndToEndOnMemory(t *testing.T) {
	conn := deliverytest.Memory(t, "orders")
	endToEnd(t, func(msgs []transport.Message) deliverytest.Outcome[*testpb.OrderPlaced] {
		return deliverytest.Deliver[*testpb.OrderPlaced](t, conn, "orders", protobuf.Codec, msgs)
	})
}

func TestEndToEndOnRabbitMQ(t *testing.T) {
	q := brokertest.UniqueName(t, "acemq.test.protobuf")
	conn := deliverytest.RabbitMQ(t, q)
	endToEnd(t, func(msgs []transport.Message) deliverytest.Outcome[*testpb.OrderPlaced] {
		return deliverytest.Deliver[*testpb.OrderPlaced](t, conn, q, protobuf.Codec, msgs)
	})
}

// FuzzUnmarshal: any body either fails to decode or decodes to a message
// that writes and reads back as the same message; it never panics.
func FuzzUnmarshal(f *testing.F) {
	f.Add([]byte{0x0a, 0x03, 'o', '-', '1', 0x10, 0x9a, 0x21, 0x1a, 0x04, 'a', 'c', 'm', 'e'})
	f.Fuzz(func(t *testing.T, body []byte) {
		var m *testpb.OrderPlaced
		if err := protobuf.Codec.Unmarshal("application/x-protobuf", body, &m); err != nil {
			return
		}
		again, err := protobuf.Codec.Marshal(m)
		if err != nil {
			t.Fatalf("Marshal of a decoded message: %v", err)
		}
		var back *testpb.OrderPlaced
		if err := protobuf.Codec.Unmarshal("application/x-protobuf", again, &back); err != nil || !proto.Equal(m, back) {
			t.Fatalf("%x decoded to %v, wrote %x, read back %v (%v)", body, m, again, back, err)
		}
	})
}

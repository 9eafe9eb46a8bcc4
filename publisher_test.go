package acemq

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/transport"
)

func TestPublish(t *testing.T) {
	f := newFake()
	p := mustPublisher[order](t, f.conn(), "orders", WithOrigin("shop"))
	err := p.Publish(context.Background(), "order.new", order{ID: 7}, WithMessageID("m-7"), WithCausation("c-1"),
		WithHeaders(transport.Table{"tenant": "acme"}))
	if err != nil {
		t.Fatal(err)
	}
	pubs := f.publishes()
	if len(pubs) != 1 {
		t.Fatalf("%d publishes", len(pubs))
	}
	pub := pubs[0]
	if pub.Exchange != "orders" || pub.RoutingKey != "order.new" || !pub.Mandatory || !pub.Message.Persistent {
		t.Errorf("publishing %+v", pub)
	}
	env := ReadEnvelope(pub.Message)
	if env.ID != "m-7" || pub.Message.MessageID != "m-7" || env.Type != "order.new" || env.Correlation != "m-7" ||
		env.Causation != "c-1" || env.Attempt != 1 || env.Version != 1 || env.FirstSeen.IsZero() ||
		!strings.HasPrefix(env.Origin, "shop@") || env.Headers["tenant"] != "acme" || env.ContentType != "application/json" {
		t.Errorf("envelope %+v", env)
	}
	if string(pub.Message.Body) != `{"id":7,"action":""}` {
		t.Errorf("body %s", pub.Message.Body)
	}
}

func TestPublishDefaultCodecs(t *testing.T) {
	f := newFake()
	if err := mustPublisher[[]byte](t, f.conn(), "").Publish(context.Background(), "q", []byte{0xff}); err != nil {
		t.Fatal(err)
	}
	if err := mustPublisher[string](t, f.conn(), "").Publish(context.Background(), "q", "héllo"); err != nil {
		t.Fatal(err)
	}
	pubs := f.publishes()
	if pubs[0].Message.ContentType != "application/octet-stream" || pubs[1].Message.ContentType != "text/plain; charset=utf-8" {
		t.Errorf("content types %q and %q", pubs[0].Message.ContentType, pubs[1].Message.ContentType)
	}
}

func TestPublishErrors(t *testing.T) {
	tests := []struct {
		name    string
		confirm func(transport.Publishing) error
		opts    []MessageOption
		blocked string
		is      error
		says    string
	}{
		{"unroutable", func(transport.Publishing) error { return transport.ErrUnroutable }, nil, "", ErrUnroutable,
			`to exchange orders with routing key "order.new": unroutable`},
		{"refused", func(transport.Publishing) error { return transport.ErrRefused }, nil, "", ErrRefused, "refused by the broker"},
		{"timed out", func(transport.Publishing) error { return errNoAnswer }, nil, "", ErrTimeout, "timed out waiting for the broker's confirm"},
		// Sent before the broker's connection.blocked arrived: the confirm
		// never comes until the alarm clears, and the error says why.
		{"timed out while blocked", func(transport.Publishing) error { return errNoAnswer }, nil, "low on memory", ErrBlocked,
			"timed out waiting for the broker's confirm: blocked by the broker: low on memory"},
		{"reserved header", nil, []MessageOption{WithHeaders(transport.Table{"x-acemq-attempt": 5})}, "", ErrReservedHeader, "x-acemq-attempt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			f.confirm, f.blocked = tt.confirm, tt.blocked
			p := mustPublisher[order](t, f.conn(), "orders", WithConfirmTimeout(10*time.Millisecond))
			err := p.Publish(context.Background(), "order.new", order{}, append(tt.opts, WithMessageID("m-1"))...)
			var pe *PublishError
			if !errors.Is(err, tt.is) || !errors.As(err, &pe) || pe.MessageID != "m-1" || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("Publish = %v, want a *PublishError for m-1 matching %v and saying %q", err, tt.is, tt.says)
			}
		})
	}
}

// A batch reports exactly the messages that failed, by index.
func TestPublishBatch(t *testing.T) {
	f := newFake()
	f.confirm = func(p transport.Publishing) error {
		if p.RoutingKey == "nowhere" {
			return transport.ErrUnroutable
		}
		return nil
	}
	p := mustPublisher[order](t, f.conn(), "orders", WithBatchWindow(3))
	var batch []Outgoing[order]
	var want []int
	for i := range 20 {
		key := "order.new"
		if i%7 == 3 {
			key, want = "nowhere", append(want, i)
		}
		batch = append(batch, Outgoing[order]{RoutingKey: key, Body: order{ID: i}})
	}
	err := p.PublishBatch(context.Background(), batch)
	var be *BatchError
	if !errors.As(err, &be) || be.Total != 20 {
		t.Fatalf("PublishBatch = %v, want a *BatchError of 20", err)
	}
	var got []int
	for _, f := range be.Failed {
		got = append(got, f.Index)
		if !errors.Is(f.Err, ErrUnroutable) || f.Err.RoutingKey != "nowhere" {
			t.Errorf("failure %d: %v", f.Index, f.Err)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("failed %v, want %v", got, want)
	}
	if err := p.PublishBatch(context.Background(), batch[:3]); err != nil {
		t.Errorf("a batch that all goes through: %v", err)
	}
	// Each but a batch's last says another follows, so that the transport
	// may send them in one write (transport.Publishing.More).
	var more []bool
	for _, pub := range f.publishes()[20:] {
		more = append(more, pub.More)
	}
	if !slices.Equal(more, []bool{true, true, false}) {
		t.Errorf("the last batch's publishes said More %v, want all but the last", more)
	}
}

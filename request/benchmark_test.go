package request_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/request"
)

// The broker-free round trip, for comparing a change's CPU and allocations
// (client and responder together, memory:// between them; bench/ measures
// it on RabbitMQ): go test ./request/ -run '^$' -bench . -benchmem

// benchItem is bench/'s payload: its JSON is 256 bytes.
type benchItem struct {
	ID  string `json:"id"`
	Seq int    `json:"seq"`
	Pad string `json:"pad"`
}

func BenchmarkDoMemory(b *testing.B) {
	ctx := context.Background()
	conn := acemqtest.NewBroker(b).Connect(b)
	topology := acemq.Topology{Queues: []acemq.QueueSpec{{Name: "bench", DeadLetter: true}}}
	if err := topology.Apply(ctx, conn); err != nil {
		b.Fatal(err)
	}
	responder, err := request.Serve(ctx, conn, "bench", func(_ context.Context, m acemq.Message[benchItem]) (benchItem, error) {
		return m.Body, nil
	}, request.WithConsumeOptions(acemq.WithPrefetch(100)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _, _ = responder.Close(ctx) })
	client, err := request.NewClient(ctx, conn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = client.Close(ctx) })
	item := benchItem{ID: fmt.Sprintf("m-%010d", 1), Seq: 1, Pad: strings.Repeat("x", 212)}
	b.ReportAllocs()
	for b.Loop() {
		got, err := request.Do[benchItem, benchItem](ctx, client, "", "bench", item)
		if err != nil || got.Seq != item.Seq {
			b.Fatalf("got %+v, %v", got, err)
		}
	}
}

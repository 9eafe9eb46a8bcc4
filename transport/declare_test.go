package transport

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

func TestWireArguments(t *testing.T) {
	tests := []struct {
		q    Queue
		want string
	}{
		{Queue{Name: "q", Type: Classic}, `{}`},
		{Queue{Name: "q"}, `{}`},
		{Queue{Name: "q", Type: Quorum}, `{"x-queue-type":"quorum"}`},
		{Queue{Name: "q", Type: Stream, Arguments: Table{"x-max-age": "7D"}}, `{"x-max-age":"7D","x-queue-type":"stream"}`},
	}
	for _, tt := range tests {
		got, _ := json.Marshal(tt.q.WireArguments())
		if string(got) != tt.want {
			t.Errorf("%v: WireArguments = %s, want %s", tt.q, got, tt.want)
		}
		if _, ok := tt.q.Arguments[QueueTypeArgument]; ok {
			t.Errorf("WireArguments wrote into the queue's own Arguments")
		}
	}
}

// The JSON shape the acemq command prints for each kind of declaration.
func TestDeclarationJSON(t *testing.T) {
	tests := []struct {
		d    Declaration
		want string
	}{
		{Exchange{Name: "acemq.retry", Type: Direct, Durable: true},
			`{"kind":"exchange","name":"acemq.retry","type":"direct","durable":true}`},
		{Queue{Name: "orders.new.retry.40s", Type: Classic, Durable: true, Arguments: Table{
			"x-message-ttl": int64(40000), "x-dead-letter-exchange": "acemq.retry", "x-dead-letter-routing-key": "orders.new"}},
			`{"kind":"queue","name":"orders.new.retry.40s","type":"classic","durable":true,"exclusive":false,"autoDelete":false,` +
				`"arguments":{"x-dead-letter-exchange":"acemq.retry","x-dead-letter-routing-key":"orders.new","x-message-ttl":40000}}`},
		{Queue{Name: "orders.new", Type: Quorum, Durable: true},
			`{"kind":"queue","name":"orders.new","type":"quorum","durable":true,"exclusive":false,"autoDelete":false,"arguments":{"x-queue-type":"quorum"}}`},
		{Binding{Queue: "orders.new", Exchange: "acemq.retry", RoutingKey: "orders.new"},
			`{"kind":"binding","queue":"orders.new","exchange":"acemq.retry","routingKey":"orders.new"}`},
	}
	for _, tt := range tests {
		got, err := json.Marshal(tt.d)
		if err != nil || string(got) != tt.want {
			t.Errorf("json of %v =\n  %s, %v\nwant\n  %s", tt.d, got, err, tt.want)
		}
	}
}

func TestStrings(t *testing.T) {
	tests := []struct {
		d    Declaration
		want string
	}{
		{Exchange{Name: "orders", Type: Topic, Durable: true}, "exchange orders (topic, durable)"},
		{Exchange{Name: "tmp", Type: Fanout}, "exchange tmp (fanout, transient)"},
		{Queue{Name: "q", Type: Classic, Exclusive: true, AutoDelete: true}, "queue q (classic, transient, exclusive, auto-delete)"},
		{Queue{Name: "q", Type: Classic, Durable: true, Arguments: Table{"b": int64(2), "a": "x"}}, `queue q (classic, durable) {a: "x", b: 2}`},
		{Binding{Queue: "q", Exchange: "x", RoutingKey: "a.*"}, `binding x -> q under "a.*"`},
	}
	for _, tt := range tests {
		if got := tt.d.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestRecorderKeepsOrder(t *testing.T) {
	plan := []Declaration{
		Exchange{Name: "x", Type: Direct, Durable: true},
		Queue{Name: "q", Type: Classic, Durable: true},
		Binding{Queue: "q", Exchange: "x", RoutingKey: "q"},
	}
	var rec Recorder
	for _, d := range plan {
		if err := d.DeclareOn(context.Background(), &rec); err != nil {
			t.Fatal(err)
		}
	}
	if len(rec.Declarations) != len(plan) {
		t.Fatalf("recorded %d declarations, want %d", len(rec.Declarations), len(plan))
	}
	for i := range plan {
		if rec.Declarations[i].String() != plan[i].String() || rec.Declarations[i].Kind() != plan[i].Kind() {
			t.Errorf("declaration %d = %v, want %v", i, rec.Declarations[i], plan[i])
		}
	}
}

func TestFormatTable(t *testing.T) {
	got := FormatTable(Table{
		"s": "a", "n": int64(3), "b": []byte("x"),
		"x-death": []any{Table{"count": int64(1), "queue": "q.retry.1s", "time": time.Date(2026, 11, 30, 8, 1, 27, 0, time.UTC)}},
		"m":       map[string]any{"k": []any{"v", int32(2)}},
	})
	want := `{b: 0x78, m: {k: ["v", 2]}, n: 3, s: "a", x-death: [{count: 1, queue: "q.retry.1s", time: 2026-11-30T08:01:27Z}]}`
	if got != want {
		t.Errorf("FormatTable gave\n%s\nwant\n%s", got, want)
	}
}

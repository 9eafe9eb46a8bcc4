package partition_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/partition"
	"github.com/acemq-go/acemq/transport"
)

// A message published as the Ruby, Go and Python libraries' helpers route
// it (routing key "<base>.<k>", the set's name as the base, to the set's
// exchange), sent raw through Conn.Publish, reaches partition k and is
// consumed there.
func TestRubyFormRoutingKeyReachesItsPartition(t *testing.T) {
	each(t, func(t *testing.T, conn *acemq.Conn, name string) {
		s := partition.Set{Name: name}
		declare(t, conn, s)
		const key = "ben"
		k, err := s.Of(key)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(event{Key: key, Seq: 1})
		pending, err := conn.Publish(t.Context(), name, fmt.Sprintf("%s.%d", name, k),
			acemq.RawMessage{ContentType: contract.ContentTypeJSON, Body: body})
		if err != nil {
			t.Fatal(err)
		}
		if err := pending.Wait(t.Context()); err != nil {
			t.Fatalf("the Ruby-form message was not routed: %v", err)
		}
		got := make(chan event, 1)
		cs, err := partition.Consume(t.Context(), conn, s, func(_ context.Context, m acemq.Message[event]) acemq.Decision {
			got <- m.Body
			return acemq.Accept()
		}, partition.Ordering{Partitions: []int{k}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = cs.Close(context.Background()) })
		select {
		case e := <-got:
			if e != (event{Key: key, Seq: 1}) {
				t.Errorf("%s consumed %+v, want %s's message", s.Queue(k), e, key)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("nothing consumed from %s within 10s", s.Queue(k))
		}
	})
}

// bindings lists the bindings s declares, "queue key".
func bindings(t *testing.T, s partition.Set) []string {
	t.Helper()
	plan, err := s.Topology().Plan()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range plan {
		if b, ok := d.(transport.Binding); ok {
			if b.Exchange != s.Name {
				t.Errorf("%s is bound to %q, want the set's exchange %q", b.Queue, b.Exchange, s.Name)
			}
			got = append(got, b.Queue+" "+b.RoutingKey)
		}
	}
	return got
}

// Each form binds its own keys; a publisher routes by a form its set
// binds, and a set whose publisher could reach no queue is refused.
func TestKeyForms(t *testing.T) {
	for _, c := range []struct {
		forms partition.KeyForm
		want  string
	}{
		{0, "o.p0 p0, o.p0 o.0, o.p1 p1, o.p1 o.1"},
		{partition.BothForms, "o.p0 p0, o.p0 o.0, o.p1 p1, o.p1 o.1"},
		{partition.JavaForm, "o.p0 p0, o.p1 p1"},
		{partition.DottedForm, "o.p0 o.0, o.p1 o.1"},
	} {
		s := partition.Set{Name: "o", Partitions: 2, BindForms: c.forms}
		if got := strings.Join(bindings(t, s), ", "); got != c.want {
			t.Errorf("BindForms %s binds %s, want %s", c.forms, got, c.want)
		}
		if err := s.Validate(); err != nil {
			t.Errorf("BindForms %s: Validate = %v", c.forms, err)
		}
	}
	for _, bad := range []struct {
		s    partition.Set
		want string
	}{
		{partition.Set{Name: "o", BindForms: partition.JavaForm, PublishForm: partition.DottedForm}, "unroutable"},
		{partition.Set{Name: "o", BindForms: partition.DottedForm, PublishForm: partition.JavaForm}, "unroutable"},
		{partition.Set{Name: "o", PublishForm: partition.BothForms}, "one form"},
		{partition.Set{Name: "o", BindForms: 4}, "binds KeyForm(4)"},
	} {
		if err := bad.s.Validate(); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: Validate = %v, want %q", bad.s, err, bad.want)
		}
		if _, err := partition.NewPublisher[event](nil, bad.s); err == nil {
			t.Errorf("%+v: NewPublisher succeeded", bad.s)
		}
	}
}

// A Publisher routes by its set's PublishForm: Java's p<k> by default,
// the dotted N.<k> when asked or when it is the only form bound; each
// reaches key's partition.
func TestPublishForms(t *testing.T) {
	each(t, func(t *testing.T, conn *acemq.Conn, name string) {
		// SharedActive: RabbitMQ refuses basic.get on a quorum queue with
		// a single active consumer.
		for i, s := range []partition.Set{
			{Name: name + "-java", BindForms: partition.JavaForm, SharedActive: true},
			{Name: name + "-dotted", BindForms: partition.DottedForm, SharedActive: true},
			{Name: name + "-both-dotted", PublishForm: partition.DottedForm, SharedActive: true},
		} {
			declare(t, conn, s)
			pub, err := partition.NewPublisher[event](conn, s)
			if err != nil {
				t.Fatal(err)
			}
			key := fmt.Sprintf("key-%d", i)
			if err := pub.Publish(t.Context(), key, event{Key: key}); err != nil {
				t.Fatalf("%s: %v", s.Name, err)
			}
			k, _ := s.Of(key)
			wantKey := fmt.Sprintf("p%d", k)
			if s.BindForms == partition.DottedForm || s.PublishForm == partition.DottedForm {
				wantKey = fmt.Sprintf("%s.%d", s.Name, k)
			}
			d := getWithin(t, conn, s.Queue(k))
			if d.RoutingKey != wantKey {
				t.Errorf("%s: %s got the message under %q, want %q", s.Name, s.Queue(k), d.RoutingKey, wantKey)
			}
			_ = d.Ack()
		}
	})
}

// getWithin takes one message from queue, waiting 10s at most for it.
func getWithin(t *testing.T, conn *acemq.Conn, queue string) acemq.RawDelivery {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		d, ok, err := conn.Get(t.Context(), queue)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing in %s within 10s", queue)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

package transporttest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/acemq-go/acemq/transport"
)

func exchangeBehaviours() []behaviour {
	return []behaviour{
		{"default exchange routes by queue name", defaultExchangeRoutes},
		{"default exchange cannot be declared or bound", defaultExchangeReserved},
		{"direct exchange routes by exact key", directRoutes},
		{"fanout exchange routes to every bound queue", fanoutRoutes},
		{"topic exchange matches word by word", topicMatches},
		{"a queue gets one copy however many bindings match", oneCopyPerQueue},
		{"headers exchange binding without arguments matches every message", headersWithoutArguments},
		{"binding to a missing exchange or queue is not found", bindMissing},
		{"exchange names starting amq. are reserved", amqPrefixReserved},
		{"predeclared amq. exchanges exist with their types", predeclaredExchanges},
		{"exchange redeclared with another type or durability fails", exchangeRedeclare},
		{"publish to a missing exchange is not found", publishMissingExchange},
		{"publishes in flight with some to a missing exchange", publishMissingExchangeInFlight},
		{"an unknown exchange type is refused", unknownExchangeType},
	}
}

func defaultExchangeRoutes(e *env) {
	q := e.classic("q", nil)
	e.send(q, transport.Message{Body: []byte("hello")})
	d := e.getBody(q, "hello")
	if d.Exchange != "" || d.RoutingKey != q {
		e.t.Errorf("delivered from exchange %q with routing key %q, want \"\" and %q", d.Exchange, d.RoutingKey, q)
	}
	e.ok("Ack", d.Ack())
	// The default exchange routes by the queue's exact name.
	err := e.publish(transport.Publishing{RoutingKey: strings.ToUpper(q), Mandatory: true, Message: transport.Message{Body: []byte("x")}})
	e.wantErr("mandatory publish to the upper-cased queue name", err, transport.ErrUnroutable)
	e.empty(q)
}

// RabbitMQ: 403 ACCESS_REFUSED "operation not permitted on the default
// exchange" (no transport sentinel).
func defaultExchangeReserved(e *env) {
	q := e.classic("q", nil)
	err := e.tr.Bind(e.ctx, transport.Binding{Queue: q, Exchange: "", RoutingKey: "k"})
	e.wantErr("binding to the default exchange", err, nil, "default exchange")
	err = e.tr.DeclareExchange(e.ctx, transport.Exchange{Name: "", Type: transport.Direct, Durable: true})
	e.wantErr("declaring the default exchange", err, nil, "default exchange")
	// Still routing by queue name.
	e.sendBody(q, "after")
	e.getBody(q, "after")
}

func directRoutes(e *env) {
	x := e.exchange("x", transport.Direct)
	q1, q2, q3 := e.classic("q1", nil), e.classic("q2", nil), e.classic("q3", nil)
	e.bind(q1, x, "k1")
	e.bind(q2, x, "k2")
	e.bind(q3, x, "k1")
	e.bind(q3, x, "k3")
	e.bind(q3, x, "k3") // binding twice is one binding
	for _, k := range []string{"k1", "k2", "k3"} {
		e.mustPublish(transport.Publishing{Exchange: x, RoutingKey: k, Mandatory: true, Message: transport.Message{Body: []byte(k)}})
	}
	err := e.publish(transport.Publishing{Exchange: x, RoutingKey: "K1", Mandatory: true})
	e.wantErr("mandatory publish under K1 (keys are case-sensitive)", err, transport.ErrUnroutable)
	err = e.publish(transport.Publishing{Exchange: x, RoutingKey: "k", Mandatory: true})
	e.wantErr("mandatory publish under k (no prefix matching)", err, transport.ErrUnroutable)
	for q, want := range map[string][]string{q1: {"k1"}, q2: {"k2"}, q3: {"k1", "k3"}} {
		if got := e.drain(q); !slices.Equal(got, want) {
			e.t.Errorf("queue bound under %v got %q, want %q", want, got, want)
		}
	}
	e.mustPublish(transport.Publishing{Exchange: x, RoutingKey: "k2", Message: transport.Message{Body: []byte("again")}})
	d := e.getBody(q2, "again")
	if d.Exchange != x || d.RoutingKey != "k2" {
		e.t.Errorf("delivered from exchange %q with routing key %q, want %q and k2", d.Exchange, d.RoutingKey, x)
	}
}

func fanoutRoutes(e *env) {
	x := e.exchange("x", transport.Fanout)
	q1, q2 := e.classic("q1", nil), e.classic("q2", nil)
	e.bind(q1, x, "")
	e.bind(q2, x, "some.key")
	e.mustPublish(transport.Publishing{Exchange: x, RoutingKey: "anything", Mandatory: true, Message: transport.Message{Body: []byte("m")}})
	for _, q := range []string{q1, q2} {
		d := e.getBody(q, "m")
		if d.RoutingKey != "anything" || d.Exchange != x {
			e.t.Errorf("delivered from %q with routing key %q, want %q and \"anything\"", d.Exchange, d.RoutingKey, x)
		}
	}
	unbound := e.exchange("x", transport.Fanout)
	err := e.publish(transport.Publishing{Exchange: unbound, RoutingKey: "k", Mandatory: true})
	e.wantErr("mandatory publish to a fanout exchange with no queue", err, transport.ErrUnroutable)
}

// topicCases: for each binding pattern, the routing keys (of topicKeys) it
// matches. * is exactly one word, # zero or more; "" is a key of no words.
var topicKeys = []string{"a.b.c", "a", "a.b", "a.b.b.c", "a.c", "c", "", "b", "a.b.c.d", "x.b.y", "a..c", "A.b.c"}

var topicCases = map[string][]string{
	"a.b.c":   {"a.b.c"},
	"a.*.c":   {"a.b.c", "a..c"},
	"a.#":     {"a.b.c", "a", "a.b", "a.b.b.c", "a.c", "a.b.c.d", "a..c"},
	"#.c":     {"a.b.c", "a.b.b.c", "a.c", "c", "a..c", "A.b.c"},
	"#":       topicKeys,
	"*":       {"a", "c", "b"},
	"a.b.#.c": {"a.b.c", "a.b.b.c"},
	"a.*":     {"a.b", "a.c"},
	"*.b.*":   {"a.b.c", "x.b.y", "A.b.c"},
	"a.#.#":   {"a.b.c", "a", "a.b", "a.b.b.c", "a.c", "a.b.c.d", "a..c"},
	"#.b.#":   {"a.b.c", "a.b", "a.b.b.c", "b", "a.b.c.d", "x.b.y", "A.b.c"},
	"":        {""},
	"*.*":     {"a.b", "a.c"},
	"*.#":     {"a.b.c", "a", "a.b", "a.b.b.c", "a.c", "c", "b", "a.b.c.d", "x.b.y", "a..c", "A.b.c"},
	"a.*.#":   {"a.b.c", "a.b", "a.b.b.c", "a.c", "a.b.c.d", "a..c"},
	"#.a":     {"a"},
	"a.b.c.#": {"a.b.c", "a.b.c.d"},
}

func topicMatches(e *env) {
	x := e.exchange("x", transport.Topic)
	queues := map[string]string{}
	for _, pattern := range slices.Sorted(maps.Keys(topicCases)) {
		q := e.classic("q", nil)
		e.bind(q, x, pattern)
		queues[pattern] = q
	}
	for _, k := range topicKeys {
		e.mustPublish(transport.Publishing{Exchange: x, RoutingKey: k, Message: transport.Message{Body: []byte(k)}})
	}
	// Confirmed means enqueued: no wait.
	for _, pattern := range slices.Sorted(maps.Keys(topicCases)) {
		got := e.drain(queues[pattern])
		want := topicCases[pattern]
		if !slices.Equal(got, want) {
			e.t.Errorf("pattern %q matched %q, want %q", pattern, got, want)
		}
	}
}

func oneCopyPerQueue(e *env) {
	x := e.exchange("x", transport.Topic)
	q := e.classic("q", nil)
	e.bind(q, x, "a.*")
	e.bind(q, x, "#")
	e.bind(q, x, "a.b")
	e.mustPublish(transport.Publishing{Exchange: x, RoutingKey: "a.b", Mandatory: true, Message: transport.Message{Body: []byte("once")}})
	if got := e.drain(q); !slices.Equal(got, []string{"once"}) {
		e.t.Errorf("queue got %q, want one copy", got)
	}
}

// transport.Binding carries no arguments, so x-match all/any cannot be
// expressed; a headers binding without arguments (x-match all of nothing)
// matches every message, whatever its headers and routing key.
func headersWithoutArguments(e *env) {
	x := e.exchange("x", transport.Headers)
	q := e.classic("q", nil)
	e.bind(q, x, "ignored")
	e.mustPublish(transport.Publishing{Exchange: x, RoutingKey: "k", Mandatory: true,
		Message: transport.Message{Body: []byte("1"), Headers: transport.Table{"a": "1", "b": int64(2)}}})
	e.mustPublish(transport.Publishing{Exchange: x, RoutingKey: "", Mandatory: true, Message: transport.Message{Body: []byte("2")}})
	if got := e.drain(q); !slices.Equal(got, []string{"1", "2"}) {
		e.t.Errorf("queue got %q, want both messages", got)
	}
	unbound := e.exchange("x", transport.Headers)
	err := e.publish(transport.Publishing{Exchange: unbound, Mandatory: true, Message: transport.Message{Headers: transport.Table{"a": "1"}}})
	e.wantErr("mandatory publish to a headers exchange with no binding", err, transport.ErrUnroutable)
}

func bindMissing(e *env) {
	q := e.classic("q", nil)
	x := e.exchange("x", transport.Direct)
	missingX, missingQ := e.name("missing"), e.name("missing")
	err := e.tr.Bind(e.ctx, transport.Binding{Queue: q, Exchange: missingX, RoutingKey: "k"})
	e.wantErr("binding to a missing exchange", err, transport.ErrNotFound, missingX)
	err = e.tr.Bind(e.ctx, transport.Binding{Queue: missingQ, Exchange: x, RoutingKey: "k"})
	e.wantErr("binding a missing queue", err, transport.ErrNotFound, missingQ)
	// Nothing was bound.
	err = e.publish(transport.Publishing{Exchange: x, RoutingKey: "k", Mandatory: true})
	e.wantErr("mandatory publish after the failed bindings", err, transport.ErrUnroutable)
}

// RabbitMQ: 403 ACCESS_REFUSED "exchange name 'amq.x' contains reserved
// prefix 'amq.*'" (no transport sentinel); the same for queues.
func amqPrefixReserved(e *env) {
	name := "amq." + e.name("x")
	err := e.tr.DeclareExchange(e.ctx, transport.Exchange{Name: name, Type: transport.Direct, Durable: true})
	e.wantErr("declaring exchange "+name, err, nil, name, "reserved prefix")
	err = e.publish(transport.Publishing{Exchange: name, RoutingKey: "k"})
	e.wantErr("publish to the refused exchange", err, transport.ErrNotFound)

	e.deleteQueueLater(e.tr, name)
	err = e.tr.DeclareQueue(e.ctx, transport.Queue{Name: name, Type: transport.Classic, Durable: true})
	e.wantErr("declaring queue "+name, err, nil, name, "reserved prefix")
	_, err = e.tr.InspectQueue(e.ctx, name)
	e.wantErr("inspecting the refused queue", err, transport.ErrNotFound)
}

func predeclaredExchanges(e *env) {
	for name, typ := range map[string]transport.ExchangeType{
		"amq.direct":  transport.Direct,
		"amq.fanout":  transport.Fanout,
		"amq.topic":   transport.Topic,
		"amq.headers": transport.Headers,
		"amq.match":   transport.Headers,
	} {
		err := e.tr.DeclareExchange(e.ctx, transport.Exchange{Name: name, Type: typ, Durable: true})
		e.ok("declaring "+name+" as it is", err)
		other := transport.Direct
		if typ == transport.Direct {
			other = transport.Topic
		}
		err = e.tr.DeclareExchange(e.ctx, transport.Exchange{Name: name, Type: other, Durable: true})
		e.wantErr("declaring "+name+" as "+string(other), err, transport.ErrPreconditionFailed, name, "type")
	}
	// amq.direct and amq.topic route (keys unique to this test: other tests
	// may use these exchanges).
	q := e.classic("q", nil)
	e.bind(q, "amq.direct", q)
	e.bind(q, "amq.topic", q+".#")
	e.mustPublish(transport.Publishing{Exchange: "amq.direct", RoutingKey: q, Mandatory: true, Message: transport.Message{Body: []byte("direct")}})
	e.mustPublish(transport.Publishing{Exchange: "amq.topic", RoutingKey: q + ".x.y", Mandatory: true, Message: transport.Message{Body: []byte("topic")}})
	if got := e.drain(q); !slices.Equal(got, []string{"direct", "topic"}) {
		e.t.Errorf("queue got %q, want direct and topic", got)
	}
}

// RabbitMQ: "inequivalent arg 'type' for exchange 'x' in vhost '/':
// received 'direct' but current is 'topic'", and the same for 'durable'.
func exchangeRedeclare(e *env) {
	x := e.exchange("x", transport.Topic)
	e.ok("declaring the same exchange again", e.tr.DeclareExchange(e.ctx, transport.Exchange{Name: x, Type: transport.Topic, Durable: true}))
	err := e.tr.DeclareExchange(e.ctx, transport.Exchange{Name: x, Type: transport.Direct, Durable: true})
	e.wantErr("redeclaring a topic exchange as direct", err, transport.ErrPreconditionFailed, x, "type")
	err = e.tr.DeclareExchange(e.ctx, transport.Exchange{Name: x, Type: transport.Topic, Durable: false})
	e.wantErr("redeclaring a durable exchange as transient", err, transport.ErrPreconditionFailed, x, "durable")
	// Unchanged: still a topic exchange.
	q := e.classic("q", nil)
	e.bind(q, x, "a.*")
	e.mustPublish(transport.Publishing{Exchange: x, RoutingKey: "a.b", Mandatory: true, Message: transport.Message{Body: []byte("m")}})
	e.getBody(q, "m")
}

// RabbitMQ closes the publishing channel (404 NOT_FOUND "no exchange 'x' in
// vhost '/'"): the publish fails, and the next one works. The message was
// certainly not routed, so the error matches ErrNotFound and says so, and
// does not match ErrNotConfirmed ("may or may not have been routed").
func publishMissingExchange(e *env) {
	missing := e.name("missing")
	for _, mandatory := range []bool{true, false} {
		err := e.publish(transport.Publishing{Exchange: missing, RoutingKey: "k", Mandatory: mandatory, Message: transport.Message{Body: []byte("x")}})
		e.wantNotRouted("publish to a missing exchange", err, "no exchange '"+missing+"' in vhost '/'")
	}
	// RabbitMQ cuts a reply text over 255 bytes to 252 and "...": with the
	// longest name, the error cannot name the whole exchange.
	long := missing + "." + strings.Repeat("x", 254-len(missing))
	err := e.publish(transport.Publishing{Exchange: long, RoutingKey: "k", Message: transport.Message{Body: []byte("x")}})
	e.wantNotRouted("publish to a missing exchange of 255 bytes", err, "no exchange '"+long[:252-len("NOT_FOUND - no exchange '")]+"...")
	q := e.classic("q", nil)
	e.sendBody(q, "after")
	e.getBody(q, "after")
}

// wantNotRouted asserts the error of a publish to a missing exchange, whose
// reply text says texts.
func (e *env) wantNotRouted(what string, err error, texts ...string) {
	e.t.Helper()
	e.wantErr(what, err, transport.ErrNotFound, append([]string{"the message was not routed"}, texts...)...)
	if errors.Is(err, transport.ErrNotConfirmed) {
		e.t.Errorf("%s: %v matches ErrNotConfirmed; the message was certainly not routed", what, err)
	}
}

// Publishes in flight together on one connection, as a batch sends them,
// some to a missing exchange: each of those fails as not routed, however
// many went out on the channel RabbitMQ closed; each of the others is
// confirmed, or not confirmed when the channel closed under it, but never
// reported as not found (its exchange exists). The next publish works.
func publishMissingExchangeInFlight(e *env) {
	missing := e.name("missing")
	q := e.classic("q", nil)
	const n = 90
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			p := transport.Publishing{RoutingKey: q, Mandatory: true, Message: transport.Message{Body: []byte(fmt.Sprint(i))}}
			if i%3 == 0 {
				p.Exchange = missing
			}
			c, err := e.tr.Publish(e.ctx, p)
			if err == nil {
				err = c.Wait(e.ctx)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	confirmed := 0
	for i, err := range errs {
		switch {
		case i%3 == 0:
			e.wantNotRouted(fmt.Sprintf("publish %d to the missing exchange", i), err, "no exchange '"+missing+"' in vhost '/'")
		case err == nil:
			confirmed++
		case errors.Is(err, transport.ErrNotFound) || !errors.Is(err, transport.ErrNotConfirmed):
			e.t.Errorf("publish %d to %s: %v; want it confirmed or ErrNotConfirmed, and not ErrNotFound", i, q, err)
		}
	}
	if got := len(e.drain(q)); got < confirmed || got > n-n/3 {
		e.t.Errorf("%s holds %d messages; %d were confirmed, %d sent to it", q, got, confirmed, n-n/3)
	}
	e.sendBody(q, "after")
	e.getBody(q, "after")
}

// RabbitMQ 3.10: 503 COMMAND_INVALID "unknown exchange type
// 'x-delayed-message'" (no plugin), a connection exception: the transport
// reconnects (the suite uses a connection of its own). RabbitMQ 4.0: 406
// PRECONDITION_FAILED with the same words, which closes only the channel.
// Either way nothing is declared.
func unknownExchangeType(e *env) {
	tr := e.connect()
	for i, typ := range []transport.ExchangeType{"bogus", "x-delayed-message"} {
		name := e.name("x")
		e.deleteExchangeLater(name)
		err := tr.DeclareExchange(e.ctx, transport.Exchange{Name: name, Type: typ, Durable: true})
		what := "declaring an exchange of type " + string(typ)
		if e.v.atLeast(4, 0) {
			e.wantErr(what, err, transport.ErrPreconditionFailed, "unknown exchange type '"+string(typ)+"'")
			if st := tr.State(); st.Connects != 1 || st.LastError != nil {
				e.t.Errorf("%s: State %+v, want the first connection still, no error", what, st)
			}
		} else {
			e.wantErr(what, err, nil, "unknown exchange type '"+string(typ)+"'")
			if errors.Is(err, transport.ErrPreconditionFailed) {
				e.t.Errorf("%s: %v matches ErrPreconditionFailed; RabbitMQ 3.10 answers COMMAND_INVALID (503)", what, err)
			}
			e.eventually("the transport connected again", func() bool { return tr.State().Connects == i+2 })
		}
		err = e.publish(transport.Publishing{Exchange: name, RoutingKey: "k"})
		e.wantErr("publish to the refused exchange", err, transport.ErrNotFound)
	}
}

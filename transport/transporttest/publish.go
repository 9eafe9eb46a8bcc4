package transporttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

func publishBehaviours() []behaviour {
	return []behaviour{
		{"a confirmed publish is in the queue at once", confirmedIsEnqueued},
		{"a run of publishes with More is routed in order and each confirmed", publishRunWithMore},
		{"a publish with More is answered when waited on, with nothing after it", publishMoreThenWait},
		{"a publish with More reaches its queue with nothing after it, unwaited", publishMoreAlone},
		{"mandatory unroutable publish comes back", mandatoryUnroutable},
		{"non-mandatory unroutable publish is confirmed and dropped", nonMandatoryUnroutable},
		{"concurrent publishes each get their own answer", concurrentPublishes},
		{"properties and headers survive the trip exactly", propertiesSurvive},
		{"header values keep their types", headerTypes},
		{"a header value amqp091 cannot encode fails Publish", headerTypesRefused},
		{"a published message is a copy", publishCopies},
		{"timestamps have whole-second resolution", timestampSeconds},
		{"an invalid expiration is refused", invalidExpiration},
		{"a message over the maximum size is refused", maxMessageSize},
		{"a user id other than the connection's user is refused", foreignUserID},
		{"publish with an ended context fails and sends nothing", publishEndedContext},
		{"ping answers until the transport is closed", pingUntilClosed},
	}
}

// richMessage has every property acemq reads or writes and headers of the
// types the envelope uses.
func richMessage() transport.Message {
	return transport.Message{
		Headers: transport.Table{
			contract.HeaderID:          "6f1c2d3e-0000-4000-8000-000000000001",
			contract.HeaderAttempt:     int64(3),
			contract.HeaderFirstSeen:   int64(1_700_000_000_123),
			contract.HeaderType:        "order.created",
			contract.HeaderTraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
			"nested":                   transport.Table{"k": "v", "n": int64(-1), "deeper": transport.Table{"x": int64(1)}},
			"list":                     []any{"a", int64(2), transport.Table{"t": "u"}, []any{"inner"}},
			"empty":                    "",
		},
		ContentType:     contract.ContentTypeJSON,
		ContentEncoding: "identity",
		MessageID:       "6f1c2d3e-0000-4000-8000-000000000001",
		CorrelationID:   "corr-1",
		ReplyTo:         "replies",
		Type:            "order.created",
		Timestamp:       time.Unix(1_700_000_000, 0),
		Persistent:      true,
		Priority:        4,
		AppID:           "billing",
		Body:            []byte{'{', '"', 'n', '"', ':', '1', '}', 0, 0xff, '\n'},
	}
}

// normalize makes times comparable with reflect.DeepEqual (an AMQP
// timestamp has no location or monotonic reading) and an empty table equal
// to none.
func normalize(v any) any {
	switch v := v.(type) {
	case time.Time:
		return v.UTC().Round(0)
	case transport.Table:
		if len(v) == 0 {
			return transport.Table(nil)
		}
		out := make(transport.Table, len(v))
		for k, x := range v {
			out[k] = normalize(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = normalize(x)
		}
		return out
	}
	return v
}

// wantMessage asserts that a delivered message is want, field by field.
func (e *env) wantMessage(what string, got, want transport.Message) {
	e.t.Helper()
	gh, wh := normalize(got.Headers).(transport.Table), normalize(want.Headers).(transport.Table)
	for _, k := range slices.Sorted(maps.Keys(wh)) {
		g, ok := gh[k]
		if !ok {
			e.t.Errorf("%s: header %s is missing, want %#v", what, k, wh[k])
		} else if !reflect.DeepEqual(g, wh[k]) {
			e.t.Errorf("%s: header %s = %#v, want %#v", what, k, g, wh[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(gh)) {
		if _, ok := wh[k]; !ok {
			e.t.Errorf("%s: unexpected header %s = %#v", what, k, gh[k])
		}
	}
	for _, f := range []struct{ name, got, want string }{
		{"content type", got.ContentType, want.ContentType},
		{"content encoding", got.ContentEncoding, want.ContentEncoding},
		{"message id", got.MessageID, want.MessageID},
		{"correlation id", got.CorrelationID, want.CorrelationID},
		{"reply-to", got.ReplyTo, want.ReplyTo},
		{"type", got.Type, want.Type},
		{"expiration", got.Expiration, want.Expiration},
		{"app id", got.AppID, want.AppID},
		{"user id", got.UserID, want.UserID},
	} {
		if f.got != f.want {
			e.t.Errorf("%s: %s %q, want %q", what, f.name, f.got, f.want)
		}
	}
	if !got.Timestamp.Equal(want.Timestamp) {
		e.t.Errorf("%s: timestamp %v, want %v", what, got.Timestamp, want.Timestamp)
	}
	if got.Priority != want.Priority {
		e.t.Errorf("%s: priority %d, want %d", what, got.Priority, want.Priority)
	}
	if got.Persistent != want.Persistent {
		e.t.Errorf("%s: persistent %v, want %v", what, got.Persistent, want.Persistent)
	}
	if !bytes.Equal(got.Body, want.Body) {
		e.t.Errorf("%s: body %q, want %q", what, got.Body, want.Body)
	}
}

// The settlement engine acks an original once its republish is confirmed:
// a confirm means the message is in its queue, visible to the next
// InspectQueue or Get without waiting.
func confirmedIsEnqueued(e *env) {
	q := e.classic("q", nil)
	qq := e.declareQueue(transport.Queue{Name: e.name("quorum"), Type: transport.Quorum, Durable: true})
	for i := range 3 {
		e.sendBody(q, fmt.Sprint(i))
		e.wantState(q, i+1, 0)
		e.sendBody(qq, fmt.Sprint(i))
		e.wantState(qq, i+1, 0)
	}
	for _, queue := range []string{q, qq} {
		if got := e.drain(queue); !slices.Equal(got, []string{"0", "1", "2"}) {
			e.t.Errorf("%s holds %q, want 0 1 2", queue, got)
		}
	}
}

// Publishing.More lets a transport hold a publish back for the next one
// (transport/rabbitmq sends a run in one write): what it holds still goes
// out, in order, answered one by one.
func publishRunWithMore(e *env) {
	q := e.classic("q", nil)
	var sent []*transport.Confirmation
	for i := range 5 {
		c, err := e.tr.Publish(e.ctx, transport.Publishing{RoutingKey: q, Mandatory: true, More: i < 4,
			Message: transport.Message{Body: []byte(fmt.Sprint(i))}})
		if err != nil {
			e.t.Fatalf("Publish %d: %v", i, err)
		}
		sent = append(sent, c)
	}
	// An unroutable one in the run is answered as such, and the run goes on.
	lost, err := e.tr.Publish(e.ctx, transport.Publishing{RoutingKey: e.name("nowhere"), Mandatory: true, More: true})
	e.ok("Publish to no queue", err)
	last, err := e.tr.Publish(e.ctx, transport.Publishing{RoutingKey: q, Mandatory: true, More: true, Message: transport.Message{Body: []byte("5")}})
	e.ok("Publish 5", err)
	e.ok("Wait for the last", last.Wait(e.ctx))
	e.wantErr("Wait for the unroutable one", lost.Wait(e.ctx), transport.ErrUnroutable)
	for i, c := range sent {
		e.ok(fmt.Sprintf("Wait %d", i), c.Wait(e.ctx))
	}
	if got := e.drain(q); !slices.Equal(got, []string{"0", "1", "2", "3", "4", "5"}) {
		e.t.Errorf("%s holds %q, want 0 to 5 in order", q, got)
	}
}

func publishMoreThenWait(e *env) {
	q := e.classic("q", nil)
	c, err := e.tr.Publish(e.ctx, transport.Publishing{RoutingKey: q, Mandatory: true, More: true, Message: transport.Message{Body: []byte("m")}})
	e.ok("Publish with More", err)
	e.ok("Wait", c.Wait(e.ctx))
	e.getBody(q, "m")
}

// Read from another connection: a get on the publisher's own would send
// whatever it held along with its request.
func publishMoreAlone(e *env) {
	q := e.classic("q", nil)
	_, err := e.tr.Publish(e.ctx, transport.Publishing{RoutingKey: q, Mandatory: true, More: true, Message: transport.Message{Body: []byte("m")}})
	e.ok("Publish with More", err)
	other := e.connect()
	e.eventually("the message in "+q+", read from another connection", func() bool { return e.inspectOn(other, q).Messages == 1 })
}

func mandatoryUnroutable(e *env) {
	x := e.exchange("x", transport.Direct)
	q := e.classic("q", nil)
	e.bind(q, x, "bound")
	for _, p := range []transport.Publishing{
		{Exchange: "", RoutingKey: e.name("no-such-queue")},
		{Exchange: x, RoutingKey: "unbound"},
	} {
		p.Mandatory = true
		p.Message = transport.Message{MessageID: "m", Body: []byte("m")}
		err := e.publish(p)
		e.wantErr(fmt.Sprintf("mandatory publish to %q under %q", p.Exchange, p.RoutingKey), err, transport.ErrUnroutable)
	}
	e.wantState(q, 0, 0)
	// The channel goes on: a routable one after it is confirmed.
	e.mustPublish(transport.Publishing{Exchange: x, RoutingKey: "bound", Mandatory: true, Message: transport.Message{Body: []byte("ok")}})
	e.getBody(q, "ok")
}

func nonMandatoryUnroutable(e *env) {
	x := e.exchange("x", transport.Direct)
	q := e.classic("q", nil)
	e.bind(q, x, "bound")
	e.mustPublish(transport.Publishing{Exchange: "", RoutingKey: e.name("no-such-queue"), Message: transport.Message{Body: []byte("dropped")}})
	e.mustPublish(transport.Publishing{Exchange: x, RoutingKey: "unbound", Message: transport.Message{Body: []byte("dropped")}})
	e.wantState(q, 0, 0)
}

// Many publishes in flight on one connection, a third of them unroutable:
// each Confirmation answers for its own message.
func concurrentPublishes(e *env) {
	q := e.classic("q", nil)
	nowhere := e.name("nowhere")
	const n = 300
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			key := q
			if i%3 == 0 {
				key = nowhere
			}
			c, err := e.tr.Publish(e.ctx, transport.Publishing{RoutingKey: key, Mandatory: true,
				Message: transport.Message{MessageID: fmt.Sprintf("m-%d", i), Body: []byte(fmt.Sprint(i))}})
			if err == nil {
				err = c.Wait(e.ctx)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	routed := 0
	for i, err := range errs {
		switch {
		case i%3 == 0:
			e.wantErr(fmt.Sprintf("publish %d to no queue", i), err, transport.ErrUnroutable)
		case err != nil:
			e.t.Errorf("publish %d to %s: %v, want it confirmed", i, q, err)
		default:
			routed++
		}
	}
	e.wantState(q, routed, 0)
	got := e.drain(q)
	slices.Sort(got)
	var want []string
	for i := range n {
		if i%3 != 0 {
			want = append(want, fmt.Sprint(i))
		}
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		e.t.Errorf("the queue holds %d messages, want the %d routable ones", len(got), len(want))
	}
}

func propertiesSurvive(e *env) {
	x := e.exchange("x", transport.Topic)
	q := e.classic("q", nil)
	e.bind(q, x, "order.*")
	msg := richMessage()
	msg.Expiration = "60000"
	e.mustPublish(transport.Publishing{Exchange: x, RoutingKey: "order.created", Mandatory: true, Message: msg})
	d := e.mustGet(q)
	e.wantMessage("via Get", d.Message, msg)
	if d.Exchange != x || d.RoutingKey != "order.created" || d.Redelivered {
		e.t.Errorf("delivered from %q under %q redelivered=%v, want %q under order.created, not redelivered", d.Exchange, d.RoutingKey, d.Redelivered, x)
	}
	e.ok("Ack", d.Ack())

	transient := transport.Message{Body: []byte("transient"), Headers: transport.Table{"only": "one"}}
	s := e.consume(q, transport.ConsumeOptions{})
	e.mustPublish(transport.Publishing{Exchange: x, RoutingKey: "order.cancelled", Mandatory: true, Message: transient})
	d = e.receive(s)
	e.wantMessage("via Consume", d.Message, transient)
	if d.Exchange != x || d.RoutingKey != "order.cancelled" || d.Redelivered {
		e.t.Errorf("delivered from %q under %q redelivered=%v, want %q under order.cancelled, not redelivered", d.Exchange, d.RoutingKey, d.Redelivered, x)
	}
	e.ok("Ack", d.Ack())

	bare := transport.Message{}
	e.mustPublish(transport.Publishing{Exchange: x, RoutingKey: "order.x", Mandatory: true, Message: bare})
	d = e.receive(s)
	e.wantMessage("a message with nothing set", d.Message, bare)
	e.ok("Ack", d.Ack())
}

// headerTypeCases: what each Go value published in a header arrives as.
// AMQP has a type per integer width, signed and unsigned; a Go int goes out
// as a 32-bit int (amqp091's choice).
func headerTypeCases() []struct {
	name    string
	in, out any
} {
	return []struct {
		name    string
		in, out any
	}{
		{"string", "s", "s"},
		{"empty string", "", ""},
		{"int64", int64(-1 << 40), int64(-1 << 40)},
		{"int32", int32(-7), int32(-7)},
		{"int16", int16(-300), int16(-300)},
		{"int8", int8(-5), int8(-5)},
		{"uint8", uint8(200), uint8(200)},
		{"uint16", uint16(60000), uint16(60000)},
		{"uint32", uint32(4_000_000_000), uint32(4_000_000_000)},
		{"int", int(7), int32(7)},
		{"bool", true, true},
		{"float32", float32(1.5), float32(1.5)},
		{"float64", 2.25, 2.25},
		{"bytes", []byte{0, 1, 0xff}, []byte{0, 1, 0xff}},
		{"timestamp", time.Unix(1_700_000_000, 0), time.Unix(1_700_000_000, 0)},
		{"table", transport.Table{"a": int64(1), "b": transport.Table{"c": "d"}}, transport.Table{"a": int64(1), "b": transport.Table{"c": "d"}}},
		{"array", []any{"a", int64(1), true, []any{int32(2)}, transport.Table{"k": "v"}}, []any{"a", int64(1), true, []any{int32(2)}, transport.Table{"k": "v"}}},
		{"empty array", []any{}, []any{}},
		{"void", nil, nil},
		// RabbitMQ takes a decimal of any scale and value and delivers it
		// unchanged, in a table or an array too.
		{"decimal", amqp.Decimal{Scale: 2, Value: 12345}, amqp.Decimal{Scale: 2, Value: 12345}},
		{"negative decimal", amqp.Decimal{Scale: 255, Value: math.MinInt32}, amqp.Decimal{Scale: 255, Value: math.MinInt32}},
		{"decimals in a table and an array", transport.Table{"d": amqp.Decimal{Value: -5}, "a": []any{amqp.Decimal{Scale: 1, Value: 1}}},
			transport.Table{"d": amqp.Decimal{Value: -5}, "a": []any{amqp.Decimal{Scale: 1, Value: 1}}}},
		// amqp091's own table, holding a transport.Table, arrives a Table.
		{"amqp.Table", amqp.Table{"d": amqp.Decimal{Scale: 3, Value: 7}, "t": transport.Table{"b": int8(1)}},
			transport.Table{"d": amqp.Decimal{Scale: 3, Value: 7}, "t": transport.Table{"b": int8(1)}}},
	}
}

func headerTypes(e *env) {
	q := e.classic("q", nil)
	in, want := transport.Table{}, transport.Table{}
	for _, c := range headerTypeCases() {
		in[c.name], want[c.name] = c.in, c.out
	}
	e.send(q, transport.Message{Headers: in})
	d := e.mustGet(q)
	e.wantMessage("headers", d.Message, transport.Message{Headers: want})
	for _, c := range headerTypeCases() {
		if got := d.Headers[c.name]; reflect.TypeOf(got) != reflect.TypeOf(c.out) {
			e.t.Errorf("header %s published as %T arrives as %T, want %T", c.name, c.in, got, c.out)
		}
	}
	e.ok("Ack", d.Ack())
}

// amqpString is a named string type, which amqp091 does not encode.
type amqpString string

// What amqp091 cannot encode never reaches RabbitMQ: Publish itself fails,
// with amqp091's words naming the field, and nothing is sent. The channel
// goes on.
func headerTypesRefused(e *env) {
	q := e.classic("q", nil)
	for _, c := range []struct {
		name  string
		value any
		text  string
	}{
		{"uint", uint(1), `table field "h" value uint not supported`},
		{"uint64", uint64(1), `table field "h" value uint64 not supported`},
		{"[]string", []string{"a"}, `table field "h" value []string not supported`},
		{"a named string", amqpString("s"), `table field "h" value transporttest.amqpString not supported`},
		{"a pointer", new(string), `table field "h" value *string not supported`},
		{"in a table", transport.Table{"n": uint(1)}, `table field "h" table field "n" value uint not supported`},
		{"in an array", []any{"a", uint(1)}, `table field "h" in array value uint not supported`},
	} {
		c2, err := e.tr.Publish(e.ctx, transport.Publishing{RoutingKey: q, Mandatory: true,
			Message: transport.Message{Headers: transport.Table{"h": c.value}, Body: []byte(c.name)}})
		if c2 != nil {
			e.t.Errorf("a header of %s: Publish returned a Confirmation, want its error", c.name)
		}
		e.wantErr("publishing a header of "+c.name, err, nil, c.text)
	}
	e.wantState(q, 0, 0)
	e.sendBody(q, "after")
	e.getBody(q, "after")
}

// Changing a message after Publish returned, or a delivered message after
// it arrived, changes nothing the broker holds.
func publishCopies(e *env) {
	q := e.classic("q", nil)
	msg := richMessage()
	want := richMessage()
	e.send(q, msg)
	msg.Body[0] = 'X'
	msg.Headers[contract.HeaderType] = "changed"
	msg.Headers["added"] = "added"
	msg.Headers["nested"].(transport.Table)["k"] = "changed"
	msg.Headers["list"].([]any)[0] = "changed"
	d := e.mustGet(q)
	e.wantMessage("after changing the published message", d.Message, want)

	d.Body[0] = 'Y'
	d.Headers[contract.HeaderType] = "changed again"
	if nested, ok := d.Headers["nested"].(transport.Table); ok {
		nested["k"] = "changed again"
	}
	if list, ok := d.Headers["list"].([]any); ok && len(list) > 0 {
		list[0] = "changed again"
	}
	e.ok("Nack(requeue)", d.Nack(true))
	d = e.mustGet(q)
	e.wantMessage("after changing the delivered message", d.Message, want)
	if !d.Redelivered {
		e.t.Error("the requeued message is not marked redelivered")
	}
	e.ok("Ack", d.Ack())
}

// AMQP timestamps are whole seconds: the message's and a header's.
func timestampSeconds(e *env) {
	q := e.classic("q", nil)
	at := time.Unix(1_700_000_000, 987_654_321)
	e.send(q, transport.Message{Timestamp: at, Headers: transport.Table{"at": at}})
	d := e.mustGet(q)
	if want := time.Unix(1_700_000_000, 0); !d.Timestamp.Equal(want) {
		e.t.Errorf("timestamp %v arrives as %v, want %v", at, d.Timestamp, want)
	}
	if got, ok := d.Headers["at"].(time.Time); !ok || !got.Equal(time.Unix(1_700_000_000, 0)) {
		e.t.Errorf("header timestamp %v arrives as %#v, want %v", at, d.Headers["at"], time.Unix(1_700_000_000, 0))
	}
	e.ok("Ack", d.Ack())
}

// RabbitMQ closes the publishing channel with 406 PRECONDITION_FAILED
// "invalid expiration 'abc': no_integer"; the next publish goes out on a new
// one.
func invalidExpiration(e *env) {
	q := e.classic("q", nil)
	for _, exp := range []string{"abc", "-1", "1.5"} {
		err := e.publish(transport.Publishing{RoutingKey: q, Mandatory: true, Message: transport.Message{Body: []byte(exp), Expiration: exp}})
		e.wantErr("publish with expiration "+exp, err, transport.ErrPreconditionFailed, "expiration")
	}
	e.wantState(q, 0, 0)
	e.sendBody(q, "after")
	e.getBody(q, "after")
}

// RabbitMQ's default max_message_size is 16 MiB from 4.0: a bigger publish
// closes the channel with 406 PRECONDITION_FAILED "message size 16777217 is
// larger than configured max size 16777216", which fails the Confirmation
// (ErrNotConfirmed and ErrPreconditionFailed), and the next publish goes
// out on a new channel. RabbitMQ 3.10's is 128 MiB: it takes 20 MiB.
func maxMessageSize(e *env) {
	// 56 MiB through a race-instrumented client takes seconds, and more
	// than the suite's timeout on a loaded machine (seen with three
	// emulations and three nodes under test at once).
	e.allow(2 * timeout)
	const max = 16 << 20
	q := e.classic("q", nil)
	for _, n := range []int{max, max + 1, 20 << 20} {
		what := fmt.Sprintf("publishing %d bytes", n)
		err := e.publish(transport.Publishing{RoutingKey: q, Mandatory: true, Message: transport.Message{Body: make([]byte, n)}})
		if n > max && e.v.atLeast(4, 0) {
			e.wantErr(what, err, transport.ErrNotConfirmed, fmt.Sprintf("message size %d is larger than configured max size %d", n, max))
			e.wantErr(what, err, transport.ErrPreconditionFailed)
			continue
		}
		e.ok(what, err)
		if d := e.mustGet(q); len(d.Body) != n {
			e.t.Errorf("%s: got %d bytes back", what, len(d.Body))
		} else {
			e.ok("Ack", d.Ack())
		}
	}
	e.wantState(q, 0, 0)
	e.sendBody(q, "after")
	e.getBody(q, "after")
}

// RabbitMQ checks the user-id property against the connection's user, so
// that a consumer can trust it.
func foreignUserID(e *env) {
	q := e.classic("q", nil)
	err := e.publish(transport.Publishing{RoutingKey: q, Mandatory: true, Message: transport.Message{Body: []byte("m"), UserID: "acemq-no-such-user"}})
	e.wantErr("publish with another user id", err, transport.ErrPreconditionFailed, "user_id")
	e.wantState(q, 0, 0)
	e.sendBody(q, "after")
	e.getBody(q, "after")
}

func publishEndedContext(e *env) {
	q := e.classic("q", nil)
	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	c, err := e.tr.Publish(ctx, transport.Publishing{RoutingKey: q, Mandatory: true, Message: transport.Message{Body: []byte("m")}})
	if !errors.Is(err, context.Canceled) {
		e.t.Errorf("Publish with a cancelled context = %v, %v; want an error matching context.Canceled", c, err)
	}
	e.wantState(q, 0, 0)
}

func pingUntilClosed(e *env) {
	tr := e.connect()
	e.ok("Ping", tr.Ping(e.ctx))
	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	e.wantErr("Ping with an ended context", tr.Ping(ctx), context.Canceled)
	e.ok("Close", tr.Close())
	e.wantErr("Ping after Close", tr.Ping(e.ctx), transport.ErrClosed)
}

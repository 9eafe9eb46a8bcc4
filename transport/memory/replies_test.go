package memory_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
)

// Every reply text below is what a RabbitMQ 3.10.8 and a 4.0.5 node
// answered to the same operation through transport/rabbitmq (see
// docs/memory.md): the same on both unless a test says otherwise. The 4.3
// mode answers as 4.0 (a 4.3.6 node answers so where the conformance suite
// asks it the same).

const locked = "RESOURCE_LOCKED - cannot obtain exclusive access to locked queue 'q' in vhost '/'. It could be originally declared on another connection or the exclusive property value does not match that of the original declaration."

func TestQueueDeclarationReplies(t *testing.T) {
	classic := func(args transport.Table) transport.Queue {
		return transport.Queue{Name: "q", Type: transport.Classic, Durable: true, Arguments: args}
	}
	quorum := func(args transport.Table) transport.Queue {
		return transport.Queue{Name: "q", Type: transport.Quorum, Durable: true, Arguments: args}
	}
	pf := transport.ErrPreconditionFailed
	tests := []struct {
		name   string
		q      transport.Queue
		target error
		code   int
		text   string // "" when the declaration succeeds
	}{
		{"ttl 0", classic(transport.Table{"x-message-ttl": int64(0)}), nil, 0, ""},
		{"ttl ten years", classic(transport.Table{"x-message-ttl": int64(315_360_000_000)}), nil, 0, ""},
		{"ttl negative", classic(transport.Table{"x-message-ttl": int64(-1)}), pf, 406, "PRECONDITION_FAILED - invalid arg 'x-message-ttl' for queue 'q' in vhost '/': {value_negative,-1}"},
		{"ttl too large", classic(transport.Table{"x-message-ttl": int64(315_360_000_001)}), pf, 406, "PRECONDITION_FAILED - invalid arg 'x-message-ttl' for queue 'q' in vhost '/': {value_too_large,315360000001}"},
		{"ttl string", classic(transport.Table{"x-message-ttl": "1000"}), pf, 406, `PRECONDITION_FAILED - invalid arg 'x-message-ttl' for queue 'q' in vhost '/': "expected integer, got longstr"`},
		{"ttl float", classic(transport.Table{"x-message-ttl": 1000.0}), pf, 406, `PRECONDITION_FAILED - invalid arg 'x-message-ttl' for queue 'q' in vhost '/': "expected integer, got double"`},
		{"ttl int8", classic(transport.Table{"x-message-ttl": int8(5)}), nil, 0, ""},
		{"expires 0", classic(transport.Table{"x-expires": int64(0)}), pf, 406, "PRECONDITION_FAILED - invalid arg 'x-expires' for queue 'q' in vhost '/': {value_zero,0}"},
		{"max-length negative", classic(transport.Table{"x-max-length": int64(-1)}), pf, 406, "PRECONDITION_FAILED - invalid arg 'x-max-length' for queue 'q' in vhost '/': {value_negative,-1}"},
		{"dead-letter exchange not a string", classic(transport.Table{"x-dead-letter-exchange": int64(1)}), pf, 406, "PRECONDITION_FAILED - invalid type 'long' for arg 'x-dead-letter-exchange' in queue 'q' in vhost '/'"},
		{"routing key without exchange", classic(transport.Table{"x-dead-letter-routing-key": "k"}), pf, 406, "PRECONDITION_FAILED - invalid arg 'x-dead-letter-routing-key' for queue 'q' in vhost '/': routing_key_but_no_dlx_defined"},
		{"routing key not a string", classic(transport.Table{"x-dead-letter-exchange": "d", "x-dead-letter-routing-key": int64(1)}), pf, 406, "PRECONDITION_FAILED - invalid arg 'x-dead-letter-routing-key' for queue 'q' in vhost '/': {unacceptable_type,long}"},
		{"overflow", classic(transport.Table{"x-overflow": "bogus"}), pf, 406, "PRECONDITION_FAILED - invalid arg 'x-overflow' for queue 'q' in vhost '/': invalid_overflow"},
		{"max-priority", classic(transport.Table{"x-max-priority": int64(256)}), pf, 406, "PRECONDITION_FAILED - invalid arg 'x-max-priority' for queue 'q' in vhost '/': {max_value_exceeded,256}"},
		{"queue mode", classic(transport.Table{"x-queue-mode": "bogus"}), pf, 406, `PRECONDITION_FAILED - invalid arg 'x-queue-mode' for queue 'q' in vhost '/': "unsupported queue mode 'bogus'"`},
		{"queue version", classic(transport.Table{"x-queue-version": int64(3)}), pf, 406, `PRECONDITION_FAILED - invalid arg 'x-queue-version' for queue 'q' in vhost '/': "unsupported queue version '3'"`},
		{"single active consumer", classic(transport.Table{"x-single-active-consumer": "true"}), pf, 406, "PRECONDITION_FAILED - invalid arg 'x-single-active-consumer' for queue 'q' in vhost '/': {unacceptable_type,longstr}"},
		{"queue type", classic(transport.Table{"x-queue-type": "bogus"}), pf, 406, `PRECONDITION_FAILED - invalid arg 'x-queue-type' for queue 'q' in vhost '/': "unsupported queue type 'bogus'"`},
		{"queue type first", transport.Queue{Name: "q", Type: "bogus", Arguments: transport.Table{"x-message-ttl": "x"}}, pf, 406, `PRECONDITION_FAILED - invalid arg 'x-queue-type' for queue 'q' in vhost '/': "unsupported queue type 'bogus'"`},
		{"delivery limit on classic", classic(transport.Table{"x-delivery-limit": int64(3)}), pf, 406, "PRECONDITION_FAILED - invalid arg 'x-delivery-limit' for queue 'q' in vhost '/' of queue type rabbit_classic_queue"},
		{"a valid argument is checked first", classic(transport.Table{"x-delivery-limit": int64(1), "x-message-ttl": "x"}), pf, 406, `PRECONDITION_FAILED - invalid arg 'x-message-ttl' for queue 'q' in vhost '/': "expected integer, got longstr"`},
		{"max-priority on quorum", quorum(transport.Table{"x-max-priority": int64(5)}), pf, 406, "PRECONDITION_FAILED - invalid arg 'x-max-priority' for queue 'q' in vhost '/' of queue type rabbit_quorum_queue"},
		{"quorum delivery limit is not validated", quorum(transport.Table{"x-delivery-limit": "3"}), nil, 0, ""},
		{"quorum dead-letter strategy", quorum(transport.Table{"x-dead-letter-strategy": "bogus"}), pf, 406, "PRECONDITION_FAILED - invalid arg 'x-dead-letter-strategy' for queue 'q' in vhost '/': invalid_dlx_strategy"},
		{"quorum transient", transport.Queue{Name: "q", Type: transport.Quorum}, pf, 406, "PRECONDITION_FAILED - invalid property 'non-durable' for queue 'q' in vhost '/'"},
		{"quorum exclusive", transport.Queue{Name: "q", Type: transport.Quorum, Durable: true, Exclusive: true}, pf, 406, "PRECONDITION_FAILED - invalid property 'exclusive-owner' for queue 'q' in vhost '/'"},
		{"quorum auto-delete", transport.Queue{Name: "q", Type: transport.Quorum, AutoDelete: true, Exclusive: true}, pf, 406, "PRECONDITION_FAILED - invalid property 'auto-delete' for queue 'q' in vhost '/'"},
		{"quorum arguments before properties", transport.Queue{Name: "q", Type: transport.Quorum, Arguments: transport.Table{"x-max-priority": int64(3)}}, pf, 406, "PRECONDITION_FAILED - invalid arg 'x-max-priority' for queue 'q' in vhost '/' of queue type rabbit_quorum_queue"},
		{"amq. prefix", transport.Queue{Name: "amq.q", Arguments: transport.Table{"x-message-ttl": "x"}}, nil, 403, "ACCESS_REFUSED - queue name 'amq.q' contains reserved prefix 'amq.*'"},
		{"unknown arguments", classic(transport.Table{"x-acemq-owner": "a", "note": int64(1)}), nil, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eachVersion(t, func(t *testing.T, _ bool, b *memory.Broker, _ *memory.ManualClock) {
				tr := connect(t, b)
				err := tr.DeclareQueue(ctxOf(t), tt.q)
				if tt.text == "" {
					must(t, "DeclareQueue", err)
					return
				}
				wantReply(t, "DeclareQueue", err, tt.target, tt.code, tt.text)
				if _, err := b.Peek(tt.q.Name); err == nil {
					t.Error("the refused queue exists")
				}
			})
		})
	}
}

// reply is what a broker answers: nothing (text "") or an exception.
type reply struct {
	target error
	code   int
	text   string
}

// wantReplyOf asserts err is r.
func wantReplyOf(t *testing.T, what string, err error, r reply) {
	t.Helper()
	if r.text == "" {
		must(t, what, err)
		return
	}
	wantReply(t, what, err, r.target, r.code, r.text)
}

// What RabbitMQ 4.0 does without mirrored classic queues: it takes any
// x-queue-master-locator (3.10 answers INTERNAL_ERROR, a connection
// exception, to one it does not know), and x-queue-leader-locator for a
// classic queue, checked and compared (after x-queue-master-locator), which
// 3.10 refuses for a classic queue.
func TestClassicQueueLocators(t *testing.T) {
	pf := transport.ErrPreconditionFailed
	refusedOn310 := reply{pf, 406, "PRECONDITION_FAILED - invalid arg 'x-queue-leader-locator' for queue 'q' in vhost '/' of queue type rabbit_classic_queue"}
	for _, tt := range []struct {
		name        string
		args        transport.Table
		on310, on40 reply
	}{
		{"master locator bogus", transport.Table{"x-queue-master-locator": "bogus"}, reply{nil, 541, "INTERNAL_ERROR"}, reply{}},
		{"master locator long", transport.Table{"x-queue-master-locator": int64(1)}, reply{nil, 541, "INTERNAL_ERROR"}, reply{}},
		{"leader locator", transport.Table{"x-queue-leader-locator": "client-local"}, refusedOn310, reply{}},
		{"leader locator bogus", transport.Table{"x-queue-leader-locator": "bogus"}, refusedOn310,
			reply{pf, 406, "PRECONDITION_FAILED - invalid arg 'x-queue-leader-locator' for queue 'q' in vhost '/': invalid_queue_locator_arg"}},
		{"leader locator long", transport.Table{"x-queue-leader-locator": int64(1)}, refusedOn310,
			reply{pf, 406, "PRECONDITION_FAILED - invalid arg 'x-queue-leader-locator' for queue 'q' in vhost '/': {unacceptable_type,long}"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			eachVersion(t, func(t *testing.T, v4 bool, b *memory.Broker, _ *memory.ManualClock) {
				tr := connect(t, b)
				err := tr.DeclareQueue(ctxOf(t), transport.Queue{Name: "q", Durable: true, Arguments: tt.args})
				want := tt.on310
				if v4 {
					want = tt.on40
				}
				wantReplyOf(t, "DeclareQueue", err, want)
			})
		})
	}
	b, _ := testBroker(t)
	tr := connect(t, b)
	declareQueue(t, tr, transport.Queue{Name: "q", Durable: true, Arguments: transport.Table{"x-queue-leader-locator": "client-local"}})
	wantReply(t, "redeclaring without the leader locator", tr.DeclareQueue(ctxOf(t), transport.Queue{Name: "q", Durable: true}), pf, 406,
		"PRECONDITION_FAILED - inequivalent arg 'x-queue-leader-locator' for queue 'q' in vhost '/': received none but current is the value 'client-local' of type 'longstr'")
	declareQueue(t, tr, transport.Queue{Name: "both", Durable: true, Arguments: transport.Table{"x-queue-leader-locator": "balanced", "x-queue-master-locator": "a"}})
	wantReply(t, "redeclaring with both locators changed", tr.DeclareQueue(ctxOf(t), transport.Queue{Name: "both", Durable: true,
		Arguments: transport.Table{"x-queue-leader-locator": "client-local", "x-queue-master-locator": "b"}}), pf, 406,
		"PRECONDITION_FAILED - inequivalent arg 'x-queue-master-locator' for queue 'both' in vhost '/': received 'b' but current is 'a'")
}

func TestQueueRedeclarationReplies(t *testing.T) {
	pf := transport.ErrPreconditionFailed
	ttl := func(v any) transport.Table { return transport.Table{"x-message-ttl": v} }
	tests := []struct {
		name          string
		first, second transport.Queue
		target        error
		code          int
		text          string
	}{
		{"same", transport.Queue{Durable: true, Arguments: ttl(int64(1000))}, transport.Queue{Durable: true, Arguments: ttl(int32(1000))}, nil, 0, ""},
		{"unknown arguments differ", transport.Queue{Arguments: transport.Table{"x-foo": "a"}}, transport.Queue{Arguments: transport.Table{"x-foo": int64(2), "y": true}}, nil, 0, ""},
		{"invalid but equal is never validated", transport.Queue{Arguments: ttl(int64(5))}, transport.Queue{Arguments: transport.Table{"x-message-ttl": int64(5), "x-delivery-limit": "z"}}, nil, 0, ""},
		{"explicit classic", transport.Queue{}, transport.Queue{Arguments: transport.Table{"x-queue-type": "classic"}}, nil, 0, ""},
		{"another ttl", transport.Queue{Arguments: ttl(int64(1000))}, transport.Queue{Arguments: ttl(int64(2000))}, pf, 406,
			"PRECONDITION_FAILED - inequivalent arg 'x-message-ttl' for queue 'q' in vhost '/': received '2000' but current is '1000'"},
		{"a string ttl", transport.Queue{Arguments: ttl(int64(1000))}, transport.Queue{Arguments: ttl("1000")}, pf, 406,
			"PRECONDITION_FAILED - inequivalent arg 'x-message-ttl' for queue 'q' in vhost '/': received '1000' but current is '1000'"},
		{"ttl left out", transport.Queue{Arguments: ttl(int64(1000))}, transport.Queue{}, pf, 406,
			"PRECONDITION_FAILED - inequivalent arg 'x-message-ttl' for queue 'q' in vhost '/': received none but current is the value '1000' of type 'long'"},
		{"dead-letter exchange added", transport.Queue{}, transport.Queue{Arguments: transport.Table{"x-dead-letter-exchange": "d"}}, pf, 406,
			"PRECONDITION_FAILED - inequivalent arg 'x-dead-letter-exchange' for queue 'q' in vhost '/': received the value 'd' of type 'longstr' but current is none"},
		{"quorum as explicit classic", transport.Queue{Type: transport.Quorum, Durable: true}, transport.Queue{Durable: true, Arguments: transport.Table{"x-queue-type": "classic"}}, pf, 406,
			"PRECONDITION_FAILED - inequivalent arg 'x-queue-type' for queue 'q' in vhost '/': received 'classic' but current is 'quorum'"},
		{"quorum compares its own arguments first", transport.Queue{Type: transport.Quorum, Durable: true, Arguments: transport.Table{"x-message-ttl": int64(1), "x-delivery-limit": int64(1)}},
			transport.Queue{Type: transport.Quorum, Durable: true, Arguments: transport.Table{"x-message-ttl": int64(2), "x-delivery-limit": int64(2)}}, pf, 406,
			"PRECONDITION_FAILED - inequivalent arg 'x-delivery-limit' for queue 'q' in vhost '/': received '2' but current is '1'"},
		{"durable", transport.Queue{}, transport.Queue{Durable: true, AutoDelete: true}, pf, 406,
			"PRECONDITION_FAILED - inequivalent arg 'durable' for queue 'q' in vhost '/': received 'true' but current is 'false'"},
		{"auto-delete", transport.Queue{}, transport.Queue{AutoDelete: true, Arguments: ttl(int64(6))}, pf, 406,
			"PRECONDITION_FAILED - inequivalent arg 'auto_delete' for queue 'q' in vhost '/': received 'true' but current is 'false'"},
		{"exclusive first", transport.Queue{}, transport.Queue{Durable: true, Exclusive: true}, nil, 405, locked},
		{"not exclusive", transport.Queue{Exclusive: true}, transport.Queue{}, nil, 405, locked},
		{"exclusive durable is transient", transport.Queue{Exclusive: true, Durable: true}, transport.Queue{Exclusive: true}, nil, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eachVersion(t, func(t *testing.T, _ bool, b *memory.Broker, _ *memory.ManualClock) {
				tr := connect(t, b)
				first, second := tt.first, tt.second
				first.Name, second.Name = "q", "q"
				declareQueue(t, tr, first)
				err := tr.DeclareQueue(ctxOf(t), second)
				if tt.text == "" {
					must(t, "redeclaring", err)
					return
				}
				wantReply(t, "redeclaring "+first.String()+" as "+second.String(), err, tt.target, tt.code, tt.text)
				must(t, "declaring the first again", tr.DeclareQueue(ctxOf(t), first))
			})
		})
	}
}

// RabbitMQ 4.0 names the type a queue has when it names none, classic, in
// its refusals; 3.10 names none.
func TestQueueTypeRedeclarationReplies(t *testing.T) {
	const prefix = "PRECONDITION_FAILED - inequivalent arg 'x-queue-type' for queue 'q' in vhost '/': "
	for _, tt := range []struct {
		name          string
		first, second transport.Queue
		on310, on40   string
	}{
		{"classic as quorum", transport.Queue{Durable: true}, transport.Queue{Type: transport.Quorum, Durable: true},
			"received the value 'quorum' of type 'longstr' but current is none", "received 'quorum' but current is 'classic'"},
		{"quorum as classic", transport.Queue{Type: transport.Quorum, Durable: true}, transport.Queue{Durable: true},
			"received none but current is the value 'quorum' of type 'longstr'", "received 'classic' but current is 'quorum'"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			eachVersion(t, func(t *testing.T, v4 bool, b *memory.Broker, _ *memory.ManualClock) {
				tr := connect(t, b)
				first, second := tt.first, tt.second
				first.Name, second.Name = "q", "q"
				declareQueue(t, tr, first)
				text := tt.on310
				if v4 {
					text = tt.on40
				}
				wantReply(t, tt.name, tr.DeclareQueue(ctxOf(t), second), transport.ErrPreconditionFailed, 406, prefix+text)
			})
		})
	}
}

func TestExchangeAndBindingReplies(t *testing.T) {
	eachVersion(t, func(t *testing.T, _ bool, b *memory.Broker, _ *memory.ManualClock) {
		tr := connect(t, b)
		ctx := ctxOf(t)
		declareExchange(t, tr, "x", transport.Direct)
		declareQueue(t, tr, transport.Queue{Name: "q"})
		pf, nf := transport.ErrPreconditionFailed, transport.ErrNotFound
		for _, tt := range []struct {
			name   string
			err    error
			target error
			code   int
			text   string
		}{
			{"another type", tr.DeclareExchange(ctx, transport.Exchange{Name: "x", Type: transport.Fanout, Durable: true}), pf, 406,
				"PRECONDITION_FAILED - inequivalent arg 'type' for exchange 'x' in vhost '/': received 'fanout' but current is 'direct'"},
			{"transient", tr.DeclareExchange(ctx, transport.Exchange{Name: "x", Type: transport.Direct}), pf, 406,
				"PRECONDITION_FAILED - inequivalent arg 'durable' for exchange 'x' in vhost '/': received 'false' but current is 'true'"},
			{"amq.topic as transient", tr.DeclareExchange(ctx, transport.Exchange{Name: "amq.topic", Type: transport.Topic}), pf, 406,
				"PRECONDITION_FAILED - inequivalent arg 'durable' for exchange 'amq.topic' in vhost '/': received 'false' but current is 'true'"},
			{"amq.rabbitmq.trace", tr.DeclareExchange(ctx, transport.Exchange{Name: "amq.rabbitmq.trace", Type: transport.Topic, Durable: true}), pf, 406,
				"PRECONDITION_FAILED - inequivalent arg 'internal' for exchange 'amq.rabbitmq.trace' in vhost '/': received 'false' but current is 'true'"},
			{"default", tr.DeclareExchange(ctx, transport.Exchange{Name: "", Type: transport.Direct, Durable: true}), nil, 403,
				"ACCESS_REFUSED - operation not permitted on the default exchange"},
			{"amq. prefix", tr.DeclareExchange(ctx, transport.Exchange{Name: "amq.x", Type: transport.Direct, Durable: true}), nil, 403,
				"ACCESS_REFUSED - exchange name 'amq.x' contains reserved prefix 'amq.*'"},
			{"bind to the default exchange", tr.Bind(ctx, transport.Binding{Queue: "q", Exchange: "", RoutingKey: "k"}), nil, 403,
				"ACCESS_REFUSED - operation not permitted on the default exchange"},
			{"bind to a missing exchange", tr.Bind(ctx, transport.Binding{Queue: "missing", Exchange: "nope", RoutingKey: "k"}), nf, 404,
				"NOT_FOUND - no exchange 'nope' in vhost '/'"},
			{"bind a missing queue", tr.Bind(ctx, transport.Binding{Queue: "missing", Exchange: "x", RoutingKey: "k"}), nf, 404,
				"NOT_FOUND - no queue 'missing' in vhost '/'"},
			{"bind no queue", tr.Bind(ctx, transport.Binding{Exchange: "x", RoutingKey: "k"}), nf, 404,
				"NOT_FOUND - no previously declared queue"},
		} {
			wantReply(t, tt.name, tt.err, tt.target, tt.code, tt.text)
		}
		must(t, "amq.direct as it is", tr.DeclareExchange(ctx, transport.Exchange{Name: "amq.direct", Type: transport.Direct, Durable: true}))
		must(t, "DeleteExchange of a missing one", tr.DeleteExchange(ctx, "nope"))
		wantReply(t, "DeleteExchange amq.direct", tr.DeleteExchange(ctx, "amq.direct"), nil, 403,
			"ACCESS_REFUSED - deletion of system exchange 'amq.direct' in vhost '/' not allowed")
		bind(t, tr, "q", "x", "k")
		must(t, "DeleteExchange", tr.DeleteExchange(ctx, "x"))
		if err := publish(t, tr, transport.Publishing{Exchange: "x", RoutingKey: "k"}); !errorsIs(err, transport.ErrNotFound) {
			t.Errorf("publish to the deleted exchange: %v", err)
		}
	})
}

func TestPublishReplies(t *testing.T) {
	eachVersion(t, func(t *testing.T, v4 bool, b *memory.Broker, _ *memory.ManualClock) {
		maxSize := 128 << 20
		if v4 {
			maxSize = 16 << 20
		}
		tr := connect(t, b)
		declareQueue(t, tr, transport.Queue{Name: "q"})
		pf := transport.ErrPreconditionFailed
		for _, tt := range []struct {
			expiration string
			text       string
		}{
			{"abc", "invalid expiration 'abc': no_integer"},
			{" 5", "invalid expiration ' 5': no_integer"},
			{"-1", "invalid expiration '-1': {value_negative,-1}"},
			{"1.5", `invalid expiration '1.5': {leftover_string,".5"}`},
			{"5 ", `invalid expiration '5 ': {leftover_string," "}`},
			{"1e3", `invalid expiration '1e3': {leftover_string,"e3"}`},
			{"315360000001", "invalid expiration '315360000001': {value_too_large,315360000001}"},
			{"900000000000000000", "invalid expiration '900000000000000000': {value_too_large,900000000000000000}"},
			// Erlang's ~p breaks a term that does not fit in 80 columns.
			{"9000000000000000000", "invalid expiration '9000000000000000000': {value_too_large,\n" + strings.Repeat(" ", 43) + "9000000000000000000}"},
			{"-1111111111111111111", "invalid expiration '-1111111111111111111': {value_negative,\n" + strings.Repeat(" ", 44) + "-1111111111111111111}"},
		} {
			err := publish(t, tr, transport.Publishing{RoutingKey: "q", Mandatory: true, Message: transport.Message{Expiration: tt.expiration}})
			wantReply(t, "expiration "+tt.expiration, err, pf, 406, "PRECONDITION_FAILED - "+tt.text)
			if !errorsIs(err, transport.ErrNotConfirmed) {
				t.Errorf("expiration %q: %v, want ErrNotConfirmed (RabbitMQ closes the channel)", tt.expiration, err)
			}
		}
		for _, ok := range []string{"+5", "0", "007", "315360000000"} {
			must(t, "expiration "+ok, publish(t, tr, transport.Publishing{RoutingKey: "q", Mandatory: true, Message: transport.Message{Expiration: ok}}))
		}
		for _, tt := range []struct {
			name   string
			p      transport.Publishing
			target error
			code   int
			text   string
		}{
			{"missing exchange", transport.Publishing{Exchange: "nope", RoutingKey: "q"}, transport.ErrNotFound, 404, "NOT_FOUND - no exchange 'nope' in vhost '/'"},
			{"internal exchange", transport.Publishing{Exchange: "amq.rabbitmq.trace", RoutingKey: "q"}, nil, 403, "ACCESS_REFUSED - cannot publish to internal exchange 'amq.rabbitmq.trace' in vhost '/'"},
			{"CC not an array", transport.Publishing{RoutingKey: "q", Message: transport.Message{Headers: transport.Table{"CC": "x"}}}, pf, 406, `PRECONDITION_FAILED - invalid message: {unacceptable_type_in_header,"CC",longstr}`},
			// max_message_size: 16 MiB from RabbitMQ 4.0, 128 MiB before.
			{"too big", transport.Publishing{RoutingKey: "q", Message: transport.Message{Body: make([]byte, maxSize+1)}}, pf, 406,
				fmt.Sprintf("PRECONDITION_FAILED - message size %d is larger than configured max size %d", maxSize+1, maxSize)},
		} {
			err := publish(t, tr, tt.p)
			wantReply(t, tt.name, err, tt.target, tt.code, tt.text)
			// A missing exchange: certainly not routed, so not "not
			// confirmed" (which says it may have been).
			if notRouted := tt.code == 404; errorsIs(err, transport.ErrNotConfirmed) == notRouted {
				t.Errorf("%s: %v; want it to match ErrNotConfirmed: %v", tt.name, err, !notRouted)
			}
		}
		if err := publish(t, tr, transport.Publishing{RoutingKey: "nowhere", Mandatory: true}); !errorsIs(err, transport.ErrUnroutable) {
			t.Errorf("mandatory publish to no queue: %v", err)
		}
		must(t, "non-mandatory publish to no queue", publish(t, tr, transport.Publishing{RoutingKey: "nowhere"}))
	})
}

// An exchange type RabbitMQ does not know: 3.10 answers COMMAND_INVALID, a
// connection exception (the Transport carries on with a new connection);
// 4.0 PRECONDITION_FAILED, with the same words, on the channel alone.
func TestExchangeTypeReplies(t *testing.T) {
	eachVersion(t, func(t *testing.T, v4 bool, b *memory.Broker, _ *memory.ManualClock) {
		tr := connect(t, b)
		for i, tt := range []struct {
			typ  transport.ExchangeType
			text string
		}{
			{"", "invalid exchange type ''"},
			{"x-delayed-message", "unknown exchange type 'x-delayed-message'"},
		} {
			err := tr.DeclareExchange(ctxOf(t), transport.Exchange{Name: "x", Type: tt.typ, Durable: true})
			connects := i + 2
			if v4 {
				wantReply(t, "exchange type "+string(tt.typ), err, transport.ErrPreconditionFailed, 406, "PRECONDITION_FAILED - "+tt.text)
				connects = 1
			} else {
				wantReply(t, "exchange type "+string(tt.typ), err, nil, 503, "COMMAND_INVALID - "+tt.text)
			}
			if st := tr.State(); st.Connects != connects {
				t.Errorf("exchange type %q: %d connections, want %d", tt.typ, st.Connects, connects)
			}
		}
	})
}

// CC and BCC headers route to more keys; BCC is never delivered.
func TestSenderSelectedDistribution(t *testing.T) {
	b, _ := testBroker(t)
	tr := connect(t, b)
	for _, q := range []string{"to", "cc", "bcc"} {
		declareQueue(t, tr, transport.Queue{Name: q})
	}
	send(t, tr, "to", transport.Message{Body: []byte("m"), Headers: transport.Table{"CC": []any{"cc"}, "BCC": []any{"bcc"}}})
	for _, q := range []string{"to", "cc", "bcc"} {
		d := mustGet(t, tr, q, "m")
		if d.RoutingKey != "to" || d.Headers["BCC"] != nil || d.Headers["CC"] == nil {
			t.Errorf("%s: routing key %q, headers %#v", q, d.RoutingKey, d.Headers)
		}
	}
	// Only BCC: an empty table is left, not none (as RabbitMQ sends it).
	send(t, tr, "to", transport.Message{Body: []byte("b"), Headers: transport.Table{"BCC": []any{"bcc"}}})
	if d := mustGet(t, tr, "bcc", "b"); d.Headers == nil || len(d.Headers) != 0 {
		t.Errorf("headers %#v, want an empty table", d.Headers)
	}
}

func TestTopicMatching(t *testing.T) {
	b, _ := testBroker(t)
	tr := connect(t, b)
	declareExchange(t, tr, "t", transport.Topic)
	// What RabbitMQ 3.10 routed, pattern by pattern, for these keys.
	keys := []string{"", "a", "b", "a.b", "a.x.b", "a.x.y.b", "a..b", "a.", ".a", "x.y", "a.b.c", "."}
	cases := map[string][]string{
		"#":     keys,
		"*":     {"a", "b"},
		"a.*":   {"a.b", "a."},
		"a.#":   {"a", "a.b", "a.x.b", "a.x.y.b", "a..b", "a.", "a.b.c"},
		"#.b":   {"b", "a.b", "a.x.b", "a.x.y.b", "a..b"},
		"a.#.b": {"a.b", "a.x.b", "a.x.y.b", "a..b"},
		"*.*":   {"a.b", "a.", ".a", "x.y", "."},
		"a.*.b": {"a.x.b", "a..b"},
		"":      {""},
		"a..b":  {"a..b"},
		"a.*.#": {"a.b", "a.x.b", "a.x.y.b", "a..b", "a.", "a.b.c"},
		"#.#":   keys,
		"*.#":   {"a", "b", "a.b", "a.x.b", "a.x.y.b", "a..b", "a.", ".a", "x.y", "a.b.c", "."},
	}
	for p := range cases {
		declareQueue(t, tr, transport.Queue{Name: "pattern " + p})
		bind(t, tr, "pattern "+p, "t", p)
	}
	for _, k := range keys {
		must(t, "publish", publish(t, tr, transport.Publishing{Exchange: "t", RoutingKey: k, Message: transport.Message{Body: []byte(k)}}))
	}
	for p, want := range cases {
		if got := drain(t, tr, "pattern "+p); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("pattern %q matched %q, want %q", p, got, want)
		}
	}
}

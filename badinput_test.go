package acemq_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

// Messages published by a raw client with every kind of malformed AceMQ
// header are each accepted, parked or dead-lettered with a clear reason; the
// consumer neither crashes nor stalls.
func TestBadInputOnRabbitMQ(t *testing.T) {
	conn := connect(t)
	checkBadInput(t, conn, testQueue(t, conn, acemq.NoRetry()))
}

func TestBadInputOnMemory(t *testing.T) {
	conn := acemqtest.NewBroker(t).Connect(t)
	if err := conn.Transport().DeclareQueue(context.Background(), transport.Queue{Name: "orders", Type: transport.Classic, Durable: true}); err != nil {
		t.Fatal(err)
	}
	checkBadInput(t, conn, "orders")
}

type badCase struct {
	name    string
	msg     transport.Message
	outcome string // "accepted", "parked" or "dead-lettered"
	reason  string // the start of x-acemq-error
}

func badCases() []badCase {
	json := func(headers transport.Table, body string) transport.Message {
		return transport.Message{ContentType: "application/json", Headers: headers, Body: []byte(body), Persistent: true}
	}
	many := transport.Table{}
	for i := range 2000 {
		many[fmt.Sprintf("h%04d", i)] = int64(i)
	}
	return []badCase{
		{"attempt not a number", json(transport.Table{contract.HeaderAttempt: "abc"}, `{"n":1}`), "accepted", ""},
		{"negative attempt", json(transport.Table{contract.HeaderAttempt: int64(-5)}, `{"n":2}`), "accepted", ""},
		{"huge attempt, retried", json(transport.Table{contract.HeaderAttempt: int64(1 << 40)}, `{"n":3,"fail":"retry"}`), "dead-lettered", "exhausted 1 attempts: no at attempt 1099511627776"},
		{"attempt as a float", json(transport.Table{contract.HeaderAttempt: 2.5}, `{"n":4}`), "accepted", ""},
		{"id not UTF-8", json(transport.Table{contract.HeaderID: "\xff\xfe"}, `{"n":5}`), "accepted", ""},
		{"no id at all", json(nil, `{"n":6,"fail":"reject"}`), "dead-lettered", "no"},
		{"first-seen garbage, retried", json(transport.Table{contract.HeaderFirstSeen: "yesterday"}, `{"n":7,"fail":"retry"}`), "dead-lettered", "exhausted 1 attempts: "},
		{"type a nested table", json(transport.Table{contract.HeaderType: transport.Table{"a": int64(1)}}, `{"n":8}`), "accepted", ""},
		{"a large header table", json(many, `{"n":9}`), "accepted", ""},
		{"empty body", json(nil, ``), "parked", "could not be decoded: "},
		{"wrong content type", transport.Message{ContentType: "application/xml", Body: []byte(`{"n":11}`)}, "parked", `could not be decoded: the content type "application/xml" is not one a JSON consumer reads (it reads application/json, `},
		{"JSON sent as text/plain", transport.Message{ContentType: "text/plain; charset=utf-8", Body: []byte(`{"n":15}`)}, "accepted", ""},
		{"JSON sent as bytes", transport.Message{ContentType: "application/octet-stream", Body: []byte(`{"n":16}`)}, "accepted", ""},
		// Every integer width amqp091 can deliver reads as the attempt (the
		// Go peer writes int32): the handler's error says which it read.
		{"attempt as int8", json(transport.Table{contract.HeaderAttempt: int8(2)}, `{"n":20,"fail":"retry"}`), "dead-lettered", "exhausted 1 attempts: no at attempt 2"},
		{"attempt as uint8", json(transport.Table{contract.HeaderAttempt: uint8(3)}, `{"n":21,"fail":"retry"}`), "dead-lettered", "exhausted 1 attempts: no at attempt 3"},
		{"attempt as int16", json(transport.Table{contract.HeaderAttempt: int16(4)}, `{"n":22,"fail":"retry"}`), "dead-lettered", "exhausted 1 attempts: no at attempt 4"},
		{"attempt as uint16", json(transport.Table{contract.HeaderAttempt: uint16(5)}, `{"n":23,"fail":"retry"}`), "dead-lettered", "exhausted 1 attempts: no at attempt 5"},
		{"attempt as int32", json(transport.Table{contract.HeaderAttempt: int32(6)}, `{"n":24,"fail":"retry"}`), "dead-lettered", "exhausted 1 attempts: no at attempt 6"},
		{"attempt as uint32", json(transport.Table{contract.HeaderAttempt: uint32(7)}, `{"n":25,"fail":"retry"}`), "dead-lettered", "exhausted 1 attempts: no at attempt 7"},
		{"attempt as a numeric string", json(transport.Table{contract.HeaderAttempt: " 8 "}, `{"n":26,"fail":"retry"}`), "dead-lettered", "exhausted 1 attempts: no at attempt 8"},
		{"text that is not JSON", transport.Message{ContentType: "text/plain", Body: []byte(`n=17`)}, "parked", `could not be decoded: the body sent as "text/plain" is not JSON: `},
		{"binary body", json(nil, "\x00\x01\xff"), "parked", "could not be decoded: "},
		{"reserved header of another version", json(transport.Table{"x-acemq-future": "v9", contract.HeaderVersion: "-3"}, `{"n":13}`), "accepted", ""},
		{"error header on a fresh message", json(transport.Table{contract.HeaderError: int64(5)}, `{"n":14,"fail":"park"}`), "parked", "no"},
	}
}

func checkBadInput(t *testing.T, conn *acemq.Conn, q string) {
	t.Helper()
	policy := acemq.NoRetry()
	var mu sync.Mutex
	seen := 0
	c := consume(t, conn, q, func(_ context.Context, m acemq.Message[item]) acemq.Decision {
		mu.Lock()
		seen++
		mu.Unlock()
		switch m.Body.Fail {
		case "retry":
			return acemq.Retry(fmt.Errorf("no at attempt %d", m.Envelope.Attempt))
		case "reject":
			return acemq.Reject(fmt.Errorf("no"))
		case "park":
			return acemq.Park(fmt.Errorf("no"))
		}
		return acemq.Accept()
	}, acemq.WithPolicy(policy))

	cases := badCases()
	want := acemq.Stats{}
	for i, bc := range cases {
		bc.msg.MessageID = fmt.Sprintf("bad-%d", i)
		if bc.name == "no id at all" {
			bc.msg.MessageID = ""
		}
		conf, err := conn.Transport().Publish(context.Background(), transport.Publishing{RoutingKey: q, Mandatory: true, Message: bc.msg})
		if err == nil {
			err = conf.Wait(context.Background())
		}
		if err != nil {
			t.Fatalf("%s: publish: %v", bc.name, err)
		}
		switch bc.outcome {
		case "accepted":
			want.Accepted++
		case "parked":
			want.Parked++
		case "dead-lettered":
			want.DeadLettered++
		}
	}
	// A good message after all of them: the consumer is still going.
	publish(t, conn, q, item{N: 100})
	want.Accepted++
	deadline := time.Now().Add(20 * time.Second)
	for c.Stats() != want {
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v, want %+v", c.Stats(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
	reasons := map[string]string{}
	for _, queue := range []string{contract.DeadLetterQueue(q), contract.ParkedQueue(q)} {
		for {
			d, ok, err := conn.Transport().Get(context.Background(), queue)
			if err != nil || !ok {
				break
			}
			reasons[d.MessageID] = acemq.ReadEnvelope(d.Message).Error
			_ = d.Ack()
		}
	}
	for i, bc := range cases {
		if bc.outcome == "accepted" {
			continue
		}
		id := fmt.Sprintf("bad-%d", i)
		if bc.name == "no id at all" {
			id = ""
		}
		if got, ok := reasons[id]; !ok || !strings.HasPrefix(got, bc.reason) {
			t.Errorf("%s: set aside with %q (found %v), want a reason starting %q", bc.name, got, ok, bc.reason)
		}
	}
}

package acemq

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/retry"
	"github.com/acemq-go/acemq/transport"
)

// The family's fixtures (testdata/fixtures/README.md), written by the Java
// reference: this library must read what Java writes and write what Java
// reads, except where CONTRACT.md says otherwise (said at each place).

// readFixture decodes a fixture with its numbers kept as json.Number.
func readFixture(t *testing.T, name string, v any) {
	t.Helper()
	data, err := os.ReadFile("testdata/fixtures/" + name)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// fixtureInt is a fixture number that must be an integer.
func fixtureInt(t *testing.T, n json.Number) int64 {
	t.Helper()
	i, err := n.Int64()
	if err != nil {
		t.Fatalf("fixture number %s: %v", n, err)
	}
	return i
}

// fixtureMillis is a fixture's milliseconds as a Duration.
func fixtureMillis(t *testing.T, n json.Number) time.Duration {
	return time.Duration(fixtureInt(t, n)) * time.Millisecond
}

// asAMQP turns a fixture table into what amqp091-go delivers: strings as
// strings (longstr), numbers as integers of the width narrow picks.
func asAMQP(t *testing.T, h map[string]any, narrow func(int64) any) transport.Table {
	t.Helper()
	out := make(transport.Table, len(h))
	for k, v := range h {
		switch v := v.(type) {
		case string:
			out[k] = v
		case json.Number:
			out[k] = narrow(fixtureInt(t, v))
		default:
			t.Fatalf("fixture header %s is a %T", k, v)
		}
	}
	return out
}

// amqpFieldType is the AMQP field type amqp091-go writes a Go value as
// (write.go), "" for a value it cannot write.
func amqpFieldType(v any) string {
	switch v.(type) {
	case bool:
		return "t"
	case uint8:
		return "B"
	case int8:
		return "b"
	case int16:
		return "s"
	case int, int32:
		return "I"
	case int64:
		return "l"
	case uint16:
		return "u"
	case uint32:
		return "i"
	case float32:
		return "f"
	case float64:
		return "d"
	case string:
		return "S"
	case []byte:
		return "x"
	case time.Time:
		return "T"
	case []any:
		return "A"
	case transport.Table:
		return "F"
	}
	return ""
}

type envelopeCase struct {
	Case        string         `json:"case"`
	RoutingKey  string         `json:"routingKey"`
	MessageID   string         `json:"messageId"`
	Body        string         `json:"body"`
	ContentType string         `json:"contentType"`
	Headers     map[string]any `json:"headers"`
}

func envelopeCases(t *testing.T) []envelopeCase {
	var f struct {
		Cases []envelopeCase `json:"cases"`
	}
	readFixture(t, "envelope.json", &f)
	if len(f.Cases) == 0 {
		t.Fatal("envelope.json has no cases")
	}
	return f.Cases
}

// Every case's headers, as amqp091 delivers them whichever integer width
// the writer chose, read into the fields they name.
func TestEnvelopeFixtureReads(t *testing.T) {
	widths := map[string]func(int64) any{
		"as longs (l)": func(n int64) any { return n },
		"as narrow as they fit": func(n int64) any {
			switch {
			case n == int64(int8(n)):
				return int8(n)
			case n == int64(int16(n)):
				return int16(n)
			case n == int64(int32(n)):
				return int32(n)
			}
			return n
		},
		"as numeric strings": func(n int64) any { return fmt.Sprint(n) },
	}
	for _, c := range envelopeCases(t) {
		for width, narrow := range widths {
			t.Run(c.Case+"/"+width, func(t *testing.T) {
				h := asAMQP(t, c.Headers, narrow)
				d := transport.Delivery{Message: transport.Message{Headers: h, MessageID: c.MessageID,
					ContentType: c.ContentType, Body: []byte(c.Body), Persistent: true}, RoutingKey: c.RoutingKey}
				str := func(k string) string { s, _ := c.Headers[k].(string); return s }
				num := func(k string) int64 { return fixtureInt(t, c.Headers[k].(json.Number)) }
				want := Envelope{
					ID: str(contract.HeaderID), Type: str(contract.HeaderType), Version: int(num(contract.HeaderVersion)),
					Correlation: str(contract.HeaderCorrelation), Causation: str(contract.HeaderCausation), Attempt: int(num(contract.HeaderAttempt)),
					FirstSeen: time.UnixMilli(num(contract.HeaderFirstSeen)).UTC(), Origin: str(contract.HeaderOrigin),
					ContentType: c.ContentType, Headers: transport.Table{},
				}
				for k, v := range h {
					if !isReserved(k) {
						want.Headers[k] = v
					}
				}
				if got := readDelivery(d); !reflect.DeepEqual(got, want) {
					t.Errorf("readDelivery = %+v\nwant         %+v", got, want)
				}
				if got := ReadEnvelope(d.Message); !reflect.DeepEqual(got, want) {
					t.Errorf("ReadEnvelope = %+v\nwant         %+v", got, want)
				}

				// The replay headers are application headers (in want.Headers);
				// package deadletter reads and writes them: its fixture test.

				// The body is JSON (a JSON string, as Java wrote a String).
				var body string
				if err := decodeBody(JSON, d.Message, &body); err != nil || !json.Valid([]byte(body)) {
					t.Errorf("the body decodes as %q, %v", body, err)
				}
			})
		}
	}
}

// An envelope given the same inputs as each case (its routing key, id,
// first-seen, origin and every value that is not the default) is written
// with the same header names, and each value of the same kind as amqp091
// sends it: a longstr (S) for a string, an integer for a number (a long, l:
// this library writes int64, CONTRACT.md section 6 says only "integer").
func TestEnvelopeFixtureWrites(t *testing.T) {
	for _, c := range envelopeCases(t) {
		t.Run(c.Case, func(t *testing.T) {
			in := ReadEnvelope(transport.Message{Headers: asAMQP(t, c.Headers, func(n int64) any { return n })})
			e := Envelope{ID: c.MessageID, FirstSeen: in.FirstSeen, Origin: in.Origin, Causation: in.Causation,
				ContentType: c.ContentType, Headers: transport.Table{}}
			if in.Type != c.RoutingKey {
				e.Type = in.Type
			}
			if in.Version != 1 {
				e.Version = in.Version
			}
			if in.Correlation != c.MessageID {
				e.Correlation = in.Correlation
			}
			for k, v := range in.Headers {
				e.Headers[k] = v
			}
			e = e.Complete(c.RoutingKey, time.Now())
			var m transport.Message
			if err := e.Write(&m); err != nil {
				t.Fatal(err)
			}
			if m.MessageID != c.MessageID || m.ContentType != c.ContentType || !m.Persistent {
				t.Errorf("message-id %q, content type %q, persistent %v", m.MessageID, m.ContentType, m.Persistent)
			}
			if got, want := slices.Sorted(maps.Keys(m.Headers)), slices.Sorted(maps.Keys(c.Headers)); !slices.Equal(got, want) {
				t.Errorf("header names %q\nwant         %q", got, want)
			}
			for k, fv := range c.Headers {
				v := m.Headers[k]
				switch fv := fv.(type) {
				case string:
					if amqpFieldType(v) != "S" || v != fv {
						t.Errorf("%s written as %T %#v, want the longstr %q", k, v, v, fv)
					}
				case json.Number:
					n := fixtureInt(t, fv)
					// acemq-replayed-at, an application header, travels as given
					// here; a replay writes it in RFC 3339 (package deadletter's
					// TestReplayedFixture).
					if amqpFieldType(v) != "l" || v != n {
						t.Errorf("%s written as %T %#v, want the long %d", k, v, v, n)
					}
				}
			}
		})
	}
}

type contractFixture struct {
	DefaultBrokerWaitThresholdMillis json.Number `json:"defaultBrokerWaitThresholdMillis"`
	DeadLetterExchange               string      `json:"deadLetterExchange"`
	RetryExchange                    string      `json:"retryExchange"`
	RetrySchedules                   []struct {
		Name                      string        `json:"name"`
		How                       string        `json:"how"`
		MaxAttempts               int           `json:"maxAttempts"`
		MaxMessageAgeMillis       json.Number   `json:"maxMessageAgeMillis"`
		HasMaxMessageAge          bool          `json:"hasMaxMessageAge"`
		JitterFactor              float64       `json:"jitterFactor"`
		BrokerWaitThresholdMillis json.Number   `json:"brokerWaitThresholdMillis"`
		ScheduleMillis            []json.Number `json:"scheduleMillis"`
		BrokerRungDelaysMillis    []json.Number `json:"brokerRungDelaysMillis"`
		Decisions                 []struct {
			Attempt          int         `json:"attempt"`
			MessageAgeMillis json.Number `json:"messageAgeMillis"`
			Retries          bool        `json:"retries"`
		} `json:"decisions"`
	} `json:"retrySchedules"`
	MaxMessageAge struct {
		DefaultMillis     json.Number `json:"defaultMillis"`
		UnknownAgeRetries bool        `json:"unknownAgeRetries"`
		Cases             []struct {
			MaxMessageAgeMillis json.Number `json:"maxMessageAgeMillis"`
			MessageAgeMillis    json.Number `json:"messageAgeMillis"`
			Retries             bool        `json:"retries"`
		} `json:"cases"`
	} `json:"maxMessageAge"`
	Jitter struct {
		Policy                 string  `json:"policy"`
		Factor                 float64 `json:"factor"`
		AppliesInBothDirection bool    `json:"appliesInBothDirections"`
		MinMultiplier          float64 `json:"minMultiplier"`
		MaxMultiplier          float64 `json:"maxMultiplier"`
		AppliesToConsumerWaits bool    `json:"appliesToConsumerWaits"`
		AppliesToBrokerWaits   bool    `json:"appliesToBrokerWaits"`
		FlooredAtMillis        int64   `json:"flooredAtMillis"`
	} `json:"jitter"`
	BrokerWaitThreshold struct {
		DefaultMillis json.Number `json:"defaultMillis"`
		Cases         []struct {
			ThresholdMillis json.Number `json:"thresholdMillis"`
			DelayMillis     json.Number `json:"delayMillis"`
			WaitsInBroker   bool        `json:"waitsInBroker"`
		} `json:"cases"`
	} `json:"brokerWaitThreshold"`
	Naming struct {
		Queue           string `json:"queue"`
		DeadLetterQueue string `json:"deadLetterQueue"`
		ParkedQueue     string `json:"parkedQueue"`
		RetryQueues     []struct {
			DelayMillis json.Number `json:"delayMillis"`
			Queue       string      `json:"queue"`
		} `json:"retryQueues"`
	} `json:"naming"`
	RungArguments []struct {
		Queue       string         `json:"queue"`
		DelayMillis json.Number    `json:"delayMillis"`
		Arguments   map[string]any `json:"arguments"`
	} `json:"rungArguments"`
	Topology struct {
		SourceQueue            string        `json:"sourceQueue"`
		PolicyScheduleMillis   []json.Number `json:"policyScheduleMillis"`
		PolicyRungDelaysMillis []json.Number `json:"policyRungDelaysMillis"`
		Exchanges              []struct {
			Name       string `json:"name"`
			Type       string `json:"type"`
			Durable    bool   `json:"durable"`
			DeclaredBy string `json:"declaredBy"`
		} `json:"exchanges"`
		Queues []struct {
			Name       string         `json:"name"`
			Type       string         `json:"type"`
			Durable    bool           `json:"durable"`
			Arguments  map[string]any `json:"arguments"`
			DeclaredBy string         `json:"declaredBy"`
		} `json:"queues"`
		Bindings []struct {
			Queue      string `json:"queue"`
			Exchange   string `json:"exchange"`
			RoutingKey string `json:"routingKey"`
			DeclaredBy string `json:"declaredBy"`
		} `json:"bindings"`
	} `json:"topology"`
	QueueTypeDefaults struct {
		SourceQueue                        string `json:"sourceQueue"`
		SourceQueueWithDeadLetter          string `json:"sourceQueueWithDeadLetter"`
		ExplicitClassicQueue               string `json:"explicitClassicQueue"`
		ExplicitClassicQueueWithDeadLetter string `json:"explicitClassicQueueWithDeadLetter"`
		DeadLetterQueue                    string `json:"deadLetterQueue"`
		ParkedQueue                        string `json:"parkedQueue"`
		RetryRung                          string `json:"retryRung"`
		Durability                         struct {
			EveryDeclaredQueueIsDurable bool `json:"everyDeclaredQueueIsDurable"`
		} `json:"durability"`
	} `json:"queueTypeDefaults"`
}

func contractFixtures(t *testing.T) contractFixture {
	var f contractFixture
	readFixture(t, "contract.json", &f)
	return f
}

func millisList(t *testing.T, ns []json.Number) []time.Duration {
	out := []time.Duration{}
	for _, n := range ns {
		out = append(out, fixtureMillis(t, n))
	}
	return out
}

func TestContractFixtureExchangesAndThreshold(t *testing.T) {
	f := contractFixtures(t)
	if f.DeadLetterExchange != contract.DeadLetterExchange || f.RetryExchange != contract.RetryExchange {
		t.Errorf("exchanges %q, %q, want %q, %q", contract.DeadLetterExchange, contract.RetryExchange, f.DeadLetterExchange, f.RetryExchange)
	}
	for _, n := range []json.Number{f.DefaultBrokerWaitThresholdMillis, f.BrokerWaitThreshold.DefaultMillis} {
		if d := fixtureMillis(t, n); contract.DefaultBrokerWaitThreshold != d {
			t.Errorf("DefaultBrokerWaitThreshold = %v, want %v", contract.DefaultBrokerWaitThreshold, d)
		}
	}
	for _, p := range []RetryPolicy{NoRetry(), Fixed(3, time.Second), Exponential(3, time.Second, time.Minute)} {
		if p.BrokerWaitThreshold() != contract.DefaultBrokerWaitThreshold {
			t.Errorf("%s: threshold %v", p, p.BrokerWaitThreshold())
		}
	}
}

// Each schedule's notation parses to the policy the fixture describes, with
// its schedule, its rungs and its give-up decisions.
func TestContractFixtureSchedules(t *testing.T) {
	f := contractFixtures(t)
	for _, s := range f.RetrySchedules {
		t.Run(s.Name, func(t *testing.T) {
			p, err := ParsePolicy(s.How)
			if err != nil {
				t.Fatal(err)
			}
			if p.String() != s.How {
				t.Errorf("String = %q, want %q", p, s.How)
			}
			maxAge := fixtureMillis(t, s.MaxMessageAgeMillis)
			if p.MaxAttempts() != s.MaxAttempts || p.MaxMessageAge() != maxAge || (p.MaxMessageAge() > 0) != s.HasMaxMessageAge ||
				p.JitterFactor() != s.JitterFactor || p.BrokerWaitThreshold() != fixtureMillis(t, s.BrokerWaitThresholdMillis) {
				t.Errorf("attempts %d, max age %v, jitter %v, threshold %v; want %d, %v (%v), %v, %s ms",
					p.MaxAttempts(), p.MaxMessageAge(), p.JitterFactor(), p.BrokerWaitThreshold(),
					s.MaxAttempts, maxAge, s.HasMaxMessageAge, s.JitterFactor, s.BrokerWaitThresholdMillis)
			}
			if got, want := append([]time.Duration{}, p.Schedule()...), millisList(t, s.ScheduleMillis); !slices.Equal(got, want) {
				t.Errorf("Schedule = %v, want %v", got, want)
			}
			want := millisList(t, s.BrokerRungDelaysMillis)
			if got := append([]time.Duration{}, retry.RungDelays(p)...); !slices.Equal(got, want) {
				t.Errorf("BrokerRungs = %v, want %v", got, want)
			}
			ladder, err := retry.NewLadder("orders.new", p, contract.ContractRungs)
			if err != nil {
				t.Fatal(err)
			}
			var delays []time.Duration
			for _, r := range ladder.Rungs() {
				delays = append(delays, r.Delay)
			}
			if !slices.Equal(append([]time.Duration{}, delays...), want) {
				t.Errorf("the ladder's rungs wait %v, want %v", delays, want)
			}
			for _, d := range s.Decisions {
				age := fixtureMillis(t, d.MessageAgeMillis)
				if got := retry.Decide(p, d.Attempt, age); got.GivesUp() == d.Retries {
					t.Errorf("Decide(%d, %v) = %v, want retries %v", d.Attempt, age, got.Outcome, d.Retries)
				}
			}
		})
	}
}

// An age reaching a non-zero limit gives up; 0 is no limit and what every
// factory sets; an unknown age retries.
func TestContractFixtureMaxMessageAge(t *testing.T) {
	f := contractFixtures(t).MaxMessageAge
	def := fixtureMillis(t, f.DefaultMillis)
	for _, p := range []RetryPolicy{NoRetry(), Fixed(5, time.Second), Exponential(5, time.Second, 24*time.Hour)} {
		if p.MaxMessageAge() != def {
			t.Errorf("%s: MaxMessageAge %v, want %v", p, p.MaxMessageAge(), def)
		}
	}
	for _, c := range f.Cases {
		limit, age := fixtureMillis(t, c.MaxMessageAgeMillis), fixtureMillis(t, c.MessageAgeMillis)
		p := Exponential(5, time.Second, 24*time.Hour).GiveUpAfter(limit)
		if got := retry.Decide(p, 1, age); got.GivesUp() == c.Retries {
			t.Errorf("limit %v, age %v: %v, want retries %v", limit, age, got.Outcome, c.Retries)
		}
	}
	p := Exponential(5, time.Second, 24*time.Hour).GiveUpAfter(2 * time.Minute)
	if got := retry.Decide(p, 1, UnknownAge); got.GivesUp() == f.UnknownAgeRetries {
		t.Errorf("unknown age: %v, want retries %v", got.Outcome, f.UnknownAgeRetries)
	}
}

func TestContractFixtureBrokerWaitThreshold(t *testing.T) {
	for _, c := range contractFixtures(t).BrokerWaitThreshold.Cases {
		threshold, d := fixtureMillis(t, c.ThresholdMillis), fixtureMillis(t, c.DelayMillis)
		p := Exponential(3, time.Second, time.Minute).WaitInBrokerFrom(threshold)
		if got := retry.WaitsOnRung(p, d); got != c.WaitsInBroker {
			t.Errorf("threshold %v, delay %v: WaitsInBroker %v, want %v", threshold, d, got, c.WaitsInBroker)
		}
		if threshold == 0 {
			// Nothing waits in the broker: no rung is declared.
			l, err := retry.NewLadder("orders.new", Fixed(3, max(d, time.Millisecond)).WaitInBrokerFrom(0), contract.ContractRungs)
			if err != nil || !l.Empty() {
				t.Errorf("threshold 0: ladder %v, %v, want no rung", l, err)
			}
		}
	}
}

// A consumer wait lands in [d*min, d*max], never below the floor; a broker
// wait is the schedule's exactly, since it names a rung.
func TestContractFixtureJitter(t *testing.T) {
	f := contractFixtures(t)
	j := f.Jitter
	var how string
	for _, s := range f.RetrySchedules {
		if s.Name == j.Policy {
			how = s.How
		}
	}
	p, err := ParsePolicy(how)
	if err != nil {
		t.Fatalf("jitter policy %q (%q): %v", j.Policy, how, err)
	}
	if p.JitterFactor() != j.Factor {
		t.Errorf("JitterFactor = %v, want %v", p.JitterFactor(), j.Factor)
	}
	const d = 10 * time.Second
	lo, hi := time.Duration(float64(d)*j.MinMultiplier), time.Duration(float64(d)*j.MaxMultiplier)
	var seen []time.Duration
	for _, r := range []float64{0, 0.25, 0.5, 0.75, 0.999999999} {
		w := retry.Jittered(p, d, func() float64 { return r })
		if w < lo || w > hi {
			t.Errorf("random %v: wait %v outside [%v, %v]", r, w, lo, hi)
		}
		seen = append(seen, w)
	}
	// Both directions: the lowest draw shortens the wait, the highest lengthens it.
	if j.AppliesInBothDirection && (seen[0] != lo || seen[len(seen)-1] <= d || !j.AppliesToConsumerWaits) {
		t.Errorf("waits %v: want the lowest at %v and the highest above %v", seen, lo, d)
	}
	floor := time.Duration(j.FlooredAtMillis) * time.Millisecond
	for _, small := range []time.Duration{0, time.Nanosecond, floor / 2} {
		if w := retry.Jittered(p, small, func() float64 { return 0 }); w != floor {
			t.Errorf("Jittered(%v) = %v, want the floor %v", small, w, floor)
		}
	}
	// Through the settlement: a broker wait is exact whatever the draw.
	broker, err := ParsePolicy("exponential(6, 10s, 1m)")
	if err != nil {
		t.Fatal(err)
	}
	ladder, _ := retry.NewLadder("orders.new", broker, contract.ContractRungs)
	for _, r := range []float64{0, 0.999999999} {
		s := settle(delivered{Source: "orders.new", Decision: Retry(fmt.Errorf("boom")), Attempt: 3, Age: UnknownAge},
			broker, ladder, func() float64 { return r })
		if s.Outcome != contract.RetriedOnRung || s.Delay != 40*time.Second || s.Wait != 0 || j.AppliesToBrokerWaits {
			t.Errorf("random %v: settlement %+v, want the 40s rung exactly", r, s)
		}
	}
}

// The naming table. Where the fixture (Java) names a sub-second rung in
// milliseconds, CONTRACT.md section 1 truncates to whole seconds, and so
// does this library: orders.new.retry.0s, not .500ms. ParseRungName still
// knows Java's name.
func TestContractFixtureNames(t *testing.T) {
	n := contractFixtures(t).Naming
	if got := contract.DeadLetterQueue(n.Queue); got != n.DeadLetterQueue {
		t.Errorf("DeadLetterQueue = %q, want %q", got, n.DeadLetterQueue)
	}
	if got := contract.ParkedQueue(n.Queue); got != n.ParkedQueue {
		t.Errorf("ParkedQueue = %q, want %q", got, n.ParkedQueue)
	}
	for _, r := range n.RetryQueues {
		d := fixtureMillis(t, r.DelayMillis)
		want := r.Queue
		if d%time.Second != 0 {
			want = n.Queue + ".retry." + contract.RenderDelay(d) // the contract's, not Java's
			if want != n.Queue+".retry.0s" {
				t.Errorf("%v renders as %q, want .0s", d, want)
			}
			if rn, ok := contract.ParseRungName(r.Queue, nil); !ok || rn.Source != n.Queue || rn.Delay != "500ms" {
				t.Errorf("ParseRungName(%q) = %+v, %v", r.Queue, rn, ok)
			}
		}
		if got := contract.RungQueue(n.Queue, d, contract.ContractRungs); got != want {
			t.Errorf("RetryQueue(%v) = %q, want %q (fixture %q)", d, got, want, r.Queue)
		}
	}
}

// asArguments turns fixture queue arguments into what the library declares:
// integers as AMQP longs (int64), strings as strings; none is nil.
func asArguments(t *testing.T, args map[string]any) transport.Table {
	if len(args) == 0 {
		return nil
	}
	return asAMQP(t, args, func(n int64) any { return n })
}

// Each rung's three arguments, as a ladder whose only wait is the rung's
// declares it. Names follow CONTRACT.md (see TestContractFixtureNames).
func TestContractFixtureRungArguments(t *testing.T) {
	for _, r := range contractFixtures(t).RungArguments {
		d := fixtureMillis(t, r.DelayMillis)
		l, err := retry.NewLadder("orders.new", Fixed(2, d).WaitInBrokerFrom(d), contract.ContractRungs)
		if err != nil || len(l.Rungs()) != 1 {
			t.Fatalf("%v: ladder %v, %v", d, l, err)
		}
		q := l.Rungs()[0].Declaration()
		want := transport.Queue{Name: contract.RungQueue("orders.new", d, contract.ContractRungs), Type: transport.Classic, Durable: true, Arguments: asArguments(t, r.Arguments)}
		if d%time.Second == 0 && want.Name != r.Queue {
			t.Errorf("rung of %v named %q, fixture %q", d, want.Name, r.Queue)
		}
		if !reflect.DeepEqual(q, want) {
			t.Errorf("rung %v\nwant %v", q, want)
		}
		if w := q.WireArguments(); len(w) != 3 {
			t.Errorf("%s sends %v, want exactly three arguments", q.Name, transport.FormatTable(w))
		}
	}
}

// The reference topology: what the topology declares (declaredBy topology
// or both) is in its plan, what a consumer declares (consumer or both) is
// its ladder's, and the two together are the fixture's list, no more.
func TestContractFixtureTopology(t *testing.T) {
	f := contractFixtures(t).Topology
	p := Exponential(6, 10*time.Second, 5*time.Minute)
	if got, want := append([]time.Duration{}, p.Schedule()...), millisList(t, f.PolicyScheduleMillis); !slices.Equal(got, want) {
		t.Errorf("Schedule = %v, want %v", got, want)
	}
	if got, want := append([]time.Duration{}, retry.RungDelays(p)...), millisList(t, f.PolicyRungDelaysMillis); !slices.Equal(got, want) {
		t.Errorf("BrokerRungs = %v, want %v", got, want)
	}
	topo := Topology{
		Exchanges: []ExchangeSpec{{Name: "orders", Type: transport.Topic}},
		Queues: []QueueSpec{{Name: f.SourceQueue, DeadLetter: true, Retry: &p, Rungs: contract.ContractRungs, // the family's
			Bindings: []BindingSpec{{Exchange: "orders", RoutingKey: "order.*"}}}},
	}
	plan, err := topo.Plan()
	if err != nil {
		t.Fatal(err)
	}
	ladder, err := retry.NewLadder(f.SourceQueue, p, contract.ContractRungs)
	if err != nil {
		t.Fatal(err)
	}
	byWho := map[string][]string{}
	add := func(who string, d transport.Declaration) {
		for _, side := range []string{"topology", "consumer"} {
			if who == side || who == "both" {
				byWho[side] = append(byWho[side], d.String())
			}
		}
		byWho["all"] = append(byWho["all"], d.String())
	}
	for _, x := range f.Exchanges {
		add(x.DeclaredBy, transport.Exchange{Name: x.Name, Type: transport.ExchangeType(x.Type), Durable: x.Durable})
	}
	for _, q := range f.Queues {
		add(q.DeclaredBy, transport.Queue{Name: q.Name, Type: transport.QueueType(q.Type), Durable: q.Durable, Arguments: asArguments(t, q.Arguments)})
	}
	for _, b := range f.Bindings {
		add(b.DeclaredBy, transport.Binding{Queue: b.Queue, Exchange: b.Exchange, RoutingKey: b.RoutingKey})
	}
	names := func(ds []transport.Declaration) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.String())
		}
		return out
	}
	sorted := func(s []string) []string { return slices.Compact(slices.Sorted(slices.Values(s))) }
	planned, consumer := names(plan), names(ladder.Declarations())
	for _, want := range byWho["topology"] {
		if !slices.Contains(planned, want) {
			t.Errorf("the plan lacks %s", want)
		}
	}
	if got, want := sorted(consumer), sorted(byWho["consumer"]); !slices.Equal(got, want) {
		t.Errorf("a consumer declares\n  %q\nwant\n  %q", got, want)
	}
	if got, want := sorted(append(planned, consumer...)), sorted(byWho["all"]); !slices.Equal(got, want) {
		t.Errorf("topology and consumer declare\n  %q\nwant\n  %q", got, want)
	}
}

func TestContractFixtureQueueTypeDefaults(t *testing.T) {
	d := contractFixtures(t).QueueTypeDefaults
	p := Fixed(2, 40*time.Second)
	topo := Topology{Queues: []QueueSpec{
		{Name: "source"},
		{Name: "dead-lettering", DeadLetter: true, Retry: &p, Rungs: contract.ContractRungs}, // the family's rung
		{Name: "classic", Type: transport.Classic},
		{Name: "classic-dead-lettering", Type: transport.Classic, DeadLetter: true},
	}}
	plan, err := topo.Plan()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"source": d.SourceQueue, "dead-lettering": d.SourceQueueWithDeadLetter,
		"classic": d.ExplicitClassicQueue, "classic-dead-lettering": d.ExplicitClassicQueueWithDeadLetter,
		"dead-lettering.dlq": d.DeadLetterQueue, "dead-lettering.parked": d.ParkedQueue,
		"classic-dead-lettering.dlq": d.DeadLetterQueue, "classic-dead-lettering.parked": d.ParkedQueue,
		contract.RungQueue("dead-lettering", 40*time.Second, contract.ContractRungs): d.RetryRung,
	}
	seen := 0
	for _, decl := range plan {
		q, ok := decl.(transport.Queue)
		if !ok {
			continue
		}
		seen++
		if string(q.Type) != want[q.Name] {
			t.Errorf("%s is %s, want %s", q.Name, q.Type, want[q.Name])
		}
		if d.Durability.EveryDeclaredQueueIsDurable && !q.Durable {
			t.Errorf("%s is not durable", q.Name)
		}
	}
	if seen != len(want) {
		t.Errorf("the plan declares %d queues, want %d", seen, len(want))
	}
	// Java cannot be asked (the fixture says so); CONTRACT.md section 5 says
	// an exclusive, auto-delete or transient queue is classic.
	for _, q := range []QueueSpec{{Exclusive: true}, {AutoDelete: true}, {Transient: true}} {
		if q.queueType() != transport.Classic {
			t.Errorf("%+v is %s, want classic", q, q.queueType())
		}
	}
}

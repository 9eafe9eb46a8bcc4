package topologyfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

func policy(t testing.TB, notation string) *acemq.RetryPolicy {
	t.Helper()
	p, err := acemq.ParsePolicy(notation)
	if err != nil {
		t.Fatal(err)
	}
	return &p
}

// The contract's reference topology, with rungs of kind ("" the default):
// with contract rungs, as every AceMQ library declares it.
func referenceTopology(t testing.TB, kind contract.RungKind) acemq.Topology {
	return acemq.Topology{
		Exchanges: []acemq.ExchangeSpec{{Name: "orders", Type: transport.Topic}},
		Queues: []acemq.QueueSpec{{
			Name:       "orders.new",
			Type:       transport.Quorum,
			DeadLetter: true,
			Retry:      policy(t, "exponential(6, 10s, 5m)"),
			Rungs:      kind,
			Bindings:   []acemq.BindingSpec{{Exchange: "orders", RoutingKey: "order.*"}},
		}},
	}
}

func TestParseFiles(t *testing.T) {
	invoices := policy(t, "fixed(4, 30s).giveUpAfter(10m)").WaitInBrokerFrom(time.Minute)
	tests := []struct {
		file string
		want acemq.Topology
	}{
		{"testdata/reference.yaml", referenceTopology(t, contract.ContractRungs)},
		{"../examples/topology.yaml", referenceTopology(t, "")},
		{"testdata/full.yaml", acemq.Topology{
			DeadLetterExchange: "billing.dlx",
			Exchanges: []acemq.ExchangeSpec{
				{Name: "billing", Type: transport.Direct},
				{Name: "billing.events", Type: transport.Fanout, Transient: true},
				{Name: "billing.audit", Type: transport.Headers},
			},
			Queues: []acemq.QueueSpec{
				{
					Name:       "invoices",
					Type:       transport.Classic,
					DeadLetter: true,
					Retry:      &invoices,
					Arguments: transport.Table{
						"x-max-length":             int64(1000),
						"x-message-ttl":            int64(86400000),
						"x-overflow":               "reject-publish",
						"x-single-active-consumer": true,
						"x-ratio":                  0.5,
						"x-nested":                 transport.Table{"a": int64(1), "b": []any{int64(1), "two", 3.5}},
					},
					Bindings: []acemq.BindingSpec{
						{Exchange: "billing", RoutingKey: "invoice.created"},
						{Exchange: "billing", RoutingKey: "invoice.updated"},
					},
				},
				{
					Name: "billing.events.local", Transient: true, Exclusive: true, AutoDelete: true,
					Bindings: []acemq.BindingSpec{{Exchange: "billing.events"}},
				},
				{Name: "billing.stream", Type: transport.Stream},
			},
		}},
		{"testdata/anchors.yaml", acemq.Topology{
			Exchanges: []acemq.ExchangeSpec{{Name: "orders", Type: transport.Topic}},
			Queues: []acemq.QueueSpec{
				{
					Name:      "orders.eu",
					Retry:     policy(t, "exponential(5, 1s, 1m)"),
					Arguments: transport.Table{"x-max-length": int64(500), "x-overflow": "reject-publish"},
					Bindings:  []acemq.BindingSpec{{Exchange: "orders", RoutingKey: "order.eu.*"}},
				},
				{
					Name:      "orders.us",
					Retry:     policy(t, "exponential(5, 1s, 1m)"),
					Arguments: transport.Table{"x-max-length": int64(700), "x-overflow": "reject-publish"},
					Bindings:  []acemq.BindingSpec{{Exchange: "orders", RoutingKey: "order.eu.*"}},
				},
			},
		}},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			got, err := Read(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Read(%s)\n got %#v\nwant %#v", tt.file, got, tt.want)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("the topology of %s does not validate: %v", tt.file, err)
			}
		})
	}
}

// The reference file plans exactly what the contract says the other
// libraries declare.
func TestReferencePlan(t *testing.T) {
	top, err := Read("testdata/reference.yaml")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := top.Plan()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range plan {
		got = append(got, d.String())
	}
	want := []string{
		`exchange orders (topic, durable)`,
		`exchange acemq.dlx (direct, durable)`,
		`exchange acemq.retry (direct, durable)`,
		`queue orders.new (quorum, durable) {x-dead-letter-exchange: "acemq.dlx", x-dead-letter-routing-key: "orders.new.dlq"}`,
		`queue orders.new.dlq (classic, durable)`,
		`queue orders.new.parked (classic, durable)`,
		`queue orders.new.retry.40s (classic, durable) {x-dead-letter-exchange: "acemq.retry", x-dead-letter-routing-key: "orders.new", x-message-ttl: 40000}`,
		`queue orders.new.retry.80s (classic, durable) {x-dead-letter-exchange: "acemq.retry", x-dead-letter-routing-key: "orders.new", x-message-ttl: 80000}`,
		`queue orders.new.retry.160s (classic, durable) {x-dead-letter-exchange: "acemq.retry", x-dead-letter-routing-key: "orders.new", x-message-ttl: 160000}`,
		`binding orders -> orders.new under "order.*"`,
		`binding acemq.dlx -> orders.new.dlq under "orders.new.dlq"`,
		`binding acemq.dlx -> orders.new.parked under "orders.new.parked"`,
		`binding acemq.retry -> orders.new under "orders.new"`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("plan\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

// A file that says nothing of rungs plans at-least-once ones, and is warned
// of nothing: the example a user starts from.
func TestDefaultRungsPlan(t *testing.T) {
	top, err := Parse([]byte("queues: [{name: orders.new, type: quorum, retry: \"exponential(6, 10s, 5m)\"}]"))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := top.Plan()
	if err != nil {
		t.Fatal(err)
	}
	var rungs []string
	for _, d := range plan {
		if q, ok := d.(transport.Queue); ok && strings.Contains(q.Name, ".retry.") {
			rungs = append(rungs, fmt.Sprintf("%s %s %v", q.Name, q.Type, q.Arguments["x-dead-letter-strategy"]))
		}
	}
	want := []string{"orders.new.retry.quorum.40s quorum at-least-once", "orders.new.retry.quorum.80s quorum at-least-once", "orders.new.retry.quorum.160s quorum at-least-once"}
	if !reflect.DeepEqual(rungs, want) {
		t.Errorf("rungs %q, want %q", rungs, want)
	}
	if w := top.Warnings(); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
}

func TestParseValues(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want acemq.Topology
	}{
		{"defaults", "queues: [{name: q}]\nexchanges: [{name: x, type: direct}]",
			acemq.Topology{Exchanges: []acemq.ExchangeSpec{{Name: "x", Type: transport.Direct}},
				Queues: []acemq.QueueSpec{{Name: "q"}}}},
		{"durable false is transient", "queues: [{name: q, durable: false}]\nexchanges: [{name: x, type: direct, durable: false}]",
			acemq.Topology{Exchanges: []acemq.ExchangeSpec{{Name: "x", Type: transport.Direct, Transient: true}},
				Queues: []acemq.QueueSpec{{Name: "q", Transient: true}}}},
		{"empty lists and tables are absent", "exchanges: []\nqueues: [{name: q, arguments: {}, bindings: [], retry: \"none()\"}]",
			acemq.Topology{Queues: []acemq.QueueSpec{{Name: "q", Retry: policy(t, "none()")}}}},
		{"null lists and tables are absent", "exchanges:\nqueues:\n  - name: q\n    arguments:\n    bindings:\n",
			acemq.Topology{Queues: []acemq.QueueSpec{{Name: "q"}}}},
		{"threshold overrides the policy's", "queues: [{name: q, retry: \"fixed(3, 10s).waitInBrokerFrom(1h)\", threshold: 5s}]",
			acemq.Topology{Queues: []acemq.QueueSpec{{Name: "q", Retry: ptr(policy(t, "fixed(3, 10s)").WaitInBrokerFrom(5 * time.Second))}}}},
		{"threshold zero", "queues: [{name: q, retry: \"fixed(3, 1m)\", threshold: 0}]",
			acemq.Topology{Queues: []acemq.QueueSpec{{Name: "q", Retry: ptr(policy(t, "fixed(3, 1m)").WaitInBrokerFrom(0))}}}},
		{"argument values", `queues:
  - name: q
    arguments:
      int: 1000
      negative: -5
      hex: 0x10
      big: 9223372036854775807
      float: 1.5
      whole-float: 2.0
      exponent: 1e3
      string: hello
      quoted-number: "1000"
      bool: true
      yes-is-a-string: yes
      date: 2026-02-03
      list: [1, a, [2]]
      table: {a: {b: 1}}
`, acemq.Topology{Queues: []acemq.QueueSpec{{Name: "q", Arguments: transport.Table{
			"int": int64(1000), "negative": int64(-5), "hex": int64(16), "big": int64(math.MaxInt64),
			"float": 1.5, "whole-float": 2.0, "exponent": 1000.0,
			"string": "hello", "quoted-number": "1000", "bool": true, "yes-is-a-string": "yes", "date": time.Date(2026, 2, 3, 0, 0, 0, 0, time.UTC),
			"list":  []any{int64(1), "a", []any{int64(2)}},
			"table": transport.Table{"a": transport.Table{"b": int64(1)}},
		}}}}},
		{"at-least-once rungs", "queues: [{name: q, retry: \"fixed(3, 1m)\", rungs: at-least-once}]",
			acemq.Topology{Queues: []acemq.QueueSpec{{Name: "q", Retry: policy(t, "fixed(3, 1m)"), Rungs: contract.AtLeastOnceRungs}}}},
		{"rungs unsaid", "queues: [{name: q, retry: \"fixed(3, 1m)\"}]",
			acemq.Topology{Queues: []acemq.QueueSpec{{Name: "q", Retry: policy(t, "fixed(3, 1m)")}}}},
		{"contract rungs, said", "queues: [{name: q, retry: \"fixed(3, 1m)\", rungs: contract}]",
			acemq.Topology{Queues: []acemq.QueueSpec{{Name: "q", Retry: policy(t, "fixed(3, 1m)"), Rungs: contract.ContractRungs}}}},
		{"a trailing document end marker", "queues: [{name: q}]\n...\n",
			acemq.Topology{Queues: []acemq.QueueSpec{{Name: "q"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse\n got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestParseErrors(t *testing.T) {
	const queueKeys = "name, type, durable, exclusive, autoDelete, deadLetter, retry, threshold, rungs, arguments, bindings"
	tests := []struct {
		name string
		yaml string
		want string // the whole error message
	}{
		{"unknown queue key", `exchanges:
  - {name: orders, type: topic}
queues:
  - name: orders.new
    type: quorum
    deadLetter: true
    retires: "exponential(6, 10s, 5m)"
`, `topology file line 7: unknown key "retires" in a queue; the keys are ` + queueKeys},
		{"unknown key in another case", "queues:\n  - name: q\n    autodelete: true\n",
			`topology file line 3: unknown key "autodelete" in a queue; the keys are ` + queueKeys},
		{"unknown top-level key", "queue:\n  - name: q\n",
			`topology file line 1: unknown key "queue" in the topology; the keys are deadLetterExchange, exchanges, queues`},
		{"unknown exchange key", "exchanges: [{name: x, kind: topic}]",
			`topology file line 1: unknown key "kind" in an exchange; the keys are name, type, durable`},
		{"unknown binding key", "queues:\n  - name: q\n    bindings:\n      - {exchange: x, routing_key: a}\n",
			`topology file line 4: unknown key "routing_key" in a binding; the keys are exchange, routingKey`},

		{"an unknown kind of rungs", "queues:\n  - name: q\n    retry: fixed(3, 1m)\n    rungs: quorum\n",
			`topology file line 4: queue "q": unknown kind of rungs "quorum": use contract (the AceMQ contract's classic rungs) or at-least-once (quorum rungs that dead-letter at least once)`},
		{"rungs without retry", "queues:\n  - name: q\n    rungs: at-least-once\n",
			`topology file line 3: queue "q": rungs is given without retry; it chooses the kind of a retry policy's rungs, so add retry or remove rungs`},
		{"bad retry notation", "queues:\n  - name: q\n    retry: exponential(6, 10s)\n",
			`topology file line 3: queue "q": retry policy "exponential(6, 10s)": at position 1: exponential takes 3 arguments, found 2`},
		{"invalid retry policy", "queues:\n  - name: q\n    retry: fixed(0, 1s)\n",
			`topology file line 3: queue "q": invalid retry policy fixed(0, 1s): maxAttempts is 0 but must be from 1 to 10000 (it counts the first delivery)`},
		{"retry is a list", "queues:\n  - name: q\n    retry: [fixed(2, 1s)]\n",
			`topology file line 3: queue "q": retry must be a single value, found a list`},
		{"threshold without unit", "queues:\n  - name: q\n    retry: fixed(2, 1m)\n    threshold: 60\n",
			`topology file line 4: queue "q": threshold "60" is not a duration; write one in Go's syntax, such as 30s, 1m or 1h30m`},
		{"negative threshold", "queues:\n  - retry: fixed(2, 1m)\n    threshold: -1s\n",
			`topology file line 3: queue 1: with threshold -1s: invalid retry policy fixed(2, 1m).waitInBrokerFrom(-1s): waitInBrokerFrom is -1s but must be at least 0 (0 keeps every wait in the consumer)`},
		{"threshold without retry", "queues:\n  - name: q\n    threshold: 1m\n",
			`topology file line 3: queue "q": threshold is given without retry; it applies to a retry policy, so add retry or remove threshold`},
		{"threshold that makes a rung too long", "queues:\n  - name: q\n    retry: fixed(2, 90000h).waitInBrokerFrom(0)\n    threshold: 1h\n",
			`topology file line 4: queue "q": with threshold 1h: invalid retry policy fixed(2, 90000h).waitInBrokerFrom(1h): the broker wait 90000h is longer than RabbitMQ allows for x-message-ttl (315360000000ms), so cap the delay at 87600h or less`},

		{"empty", "", `topology file: the file is empty; it must hold a mapping with exchanges and queues`},
		{"only comments", "# nothing\n", `topology file: the file is empty; it must hold a mapping with exchanges and queues`},
		{"empty document", "---\n", `topology file: the file is empty; it must hold a mapping with exchanges and queues`},
		{"null document", "~\n", `topology file: the file is empty; it must hold a mapping with exchanges and queues`},
		{"two documents", "queues: [{name: a}]\n---\nqueues: [{name: b}]\n",
			`topology file line 2: a topology file holds exactly one YAML document`},
		{"a list", "- name: q\n",
			`topology file line 1: expected a mapping with deadLetterExchange, exchanges and queues, found a list`},
		{"a string", "hello\n",
			`topology file line 1: expected a mapping with deadLetterExchange, exchanges and queues, found "hello"`},
		{"syntax error", "queues:\n  - name: q\n    type: a: b\n",
			`topology file line 3: mapping values are not allowed in this context`},
		{"duplicate key", "queues:\n  - name: a\n    name: b\n",
			`topology file line 3: mapping key "name" already defined at line 2`},

		{"queues not a list", "queues: 5\n", `topology file line 1: expected a list of queues, found "5"`},
		{"exchanges a mapping", "exchanges: {name: x}\n", `topology file line 1: expected a list of exchanges, found a mapping`},
		{"queue a string", "queues: [q]\n",
			`topology file line 1: expected a queue, a mapping with name, type, bindings and the like, found "q"`},
		{"bool", "queues:\n  - name: q\n    durable: maybe\n", `topology file line 3: expected true or false, found "maybe"`},
		{"name a list", "queues:\n  - name: [q]\n", `topology file line 2: expected a string, found a list`},
		{"type a mapping", "exchanges:\n  - {name: x, type: {a: b}}\n",
			`topology file line 2: expected an exchange type (direct, fanout, topic or headers), found a mapping`},
		{"bindings a string", "queues:\n  - name: q\n    bindings: x\n", `topology file line 3: expected a list of bindings, found "x"`},

		{"arguments a list", "queues:\n  - name: q\n    arguments: [1]\n",
			`topology file line 3: queue "q": arguments must be a mapping of names to values, such as {x-max-length: 1000}, found a list`},
		{"argument without value", "queues:\n  - name: q\n    arguments:\n      x-max-length:\n",
			`topology file line 4: queue "q": argument x-max-length has no value; give it one or leave it out`},
		{"argument too large", "queues:\n  - name: q\n    arguments:\n      x-max-length: 9223372036854775808\n",
			`topology file line 4: queue "q": argument x-max-length: 9223372036854775808 does not fit an AMQP long (a signed 64-bit integer)`},
		{"argument not finite", "queues:\n  - name: q\n    arguments: {x: {y: [.nan]}}\n",
			`topology file line 3: queue "q": argument x.y[0]: NaN is not a finite number`},
		{"argument that contains itself", "queues:\n  - name: q\n    arguments: &a {x: *a}\n",
			`topology file line 3: queue "q": arguments: anchor 'a' value contains itself`},

		{"every problem, in line order", `queues:
  - name: a
    retry: nonsense()
  - name: b
    durable: perhaps
    arguments: {x: ~}
  - name: c
    colour: blue
`, `topology file: 4 problems:
  - line 3: queue "a": retry policy "nonsense()": at position 1: unknown policy "nonsense"; expected none(), fixed(attempts, delay) or exponential(attempts, initial, max)
  - line 5: expected true or false, found "perhaps"
  - line 6: queue "b": argument x has no value; give it one or leave it out
  - line 8: unknown key "colour" in a queue; the keys are ` + queueKeys},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.yaml))
			if err == nil {
				t.Fatalf("Parse succeeded with %#v; want the error %s", got, tt.want)
			}
			var perr *Error
			if !errors.As(err, &perr) || len(perr.Problems) == 0 {
				t.Fatalf("the error %v (%T) is not an *Error with problems", err, err)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got %s\nwant %s", err, tt.want)
			}
			if !reflect.DeepEqual(got, acemq.Topology{}) {
				t.Errorf("Parse returned %#v with its error; want the zero topology", got)
			}
		})
	}
}

func TestRead(t *testing.T) {
	_, err := Read(filepath.Join(t.TempDir(), "missing.yaml"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read of a missing file: %v; want an error matching fs.ErrNotExist", err)
	}
	path := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(path, []byte("queues:\n  - nam: q\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Read(path)
	want := "topology file " + path + ` line 2: unknown key "nam" in a queue; the keys are name, type, durable, exclusive, autoDelete, deadLetter, retry, threshold, rungs, arguments, bindings`
	if err == nil || err.Error() != want {
		t.Errorf("Read of a bad file: %v; want %s", err, want)
	}
}

// encode writes t back as a topology file, for round trips: every value is
// written so that it reads back as the same Go value.
func encode(t acemq.Topology) ([]byte, error) {
	type binding struct {
		Exchange   string `yaml:"exchange"`
		RoutingKey string `yaml:"routingKey"`
	}
	type exchange struct {
		Name    string `yaml:"name"`
		Type    string `yaml:"type"`
		Durable bool   `yaml:"durable"`
	}
	type queue struct {
		Name       string         `yaml:"name"`
		Type       string         `yaml:"type"`
		Durable    bool           `yaml:"durable"`
		Exclusive  bool           `yaml:"exclusive"`
		AutoDelete bool           `yaml:"autoDelete"`
		DeadLetter bool           `yaml:"deadLetter"`
		Retry      string         `yaml:"retry,omitempty"`
		Rungs      string         `yaml:"rungs,omitempty"`
		Arguments  map[string]any `yaml:"arguments,omitempty"`
		Bindings   []binding      `yaml:"bindings,omitempty"`
	}
	var file struct {
		DeadLetterExchange string     `yaml:"deadLetterExchange,omitempty"`
		Exchanges          []exchange `yaml:"exchanges,omitempty"`
		Queues             []queue    `yaml:"queues,omitempty"`
	}
	file.DeadLetterExchange = t.DeadLetterExchange
	for _, x := range t.Exchanges {
		file.Exchanges = append(file.Exchanges, exchange{x.Name, string(x.Type), !x.Transient})
	}
	for _, q := range t.Queues {
		eq := queue{Name: q.Name, Type: string(q.Type), Durable: !q.Transient, Exclusive: q.Exclusive,
			AutoDelete: q.AutoDelete, DeadLetter: q.DeadLetter, Rungs: string(q.Rungs)}
		if q.Retry != nil {
			eq.Retry = q.Retry.String()
		}
		if q.Arguments != nil {
			eq.Arguments = encodeValue(q.Arguments).(map[string]any)
		}
		for _, b := range q.Bindings {
			eq.Bindings = append(eq.Bindings, binding(b))
		}
		file.Queues = append(file.Queues, eq)
	}
	return yaml.Marshal(file)
}

func encodeValue(v any) any {
	switch v := v.(type) {
	case transport.Table:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = encodeValue(x)
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, x := range v {
			l[i] = encodeValue(x)
		}
		return l
	case float64: // tagged, or 2.0 would read back as the integer 2
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: strconv.FormatFloat(v, 'g', -1, 64)}
	}
	return v
}

func TestRoundTrip(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkRoundTrip(t, data)
	}
}

func checkRoundTrip(t *testing.T, data []byte) {
	t.Helper()
	top, err := Parse(data)
	if err != nil {
		return
	}
	out, err := encode(top)
	if err != nil {
		t.Fatalf("encoding %#v: %v", top, err)
	}
	again, err := Parse(out)
	if err != nil {
		t.Fatalf("the topology written back does not parse: %v\n%s", err, out)
	}
	if len(again.Queues) != len(top.Queues) || len(again.Exchanges) != len(top.Exchanges) {
		t.Fatalf("round trip: %d queues and %d exchanges became %d and %d", len(top.Queues), len(top.Exchanges),
			len(again.Queues), len(again.Exchanges))
	}
	if !reflect.DeepEqual(again, top) {
		t.Fatalf("round trip\n got %#v\nwant %#v\nvia\n%s", again, top, out)
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		top, err := Parse(data)
		if err != nil {
			var perr *Error
			if !errors.As(err, &perr) || len(perr.Problems) == 0 || err.Error() == "" {
				t.Fatalf("the error %v (%T) is not an *Error with problems", err, err)
			}
			if !reflect.DeepEqual(top, acemq.Topology{}) {
				t.Fatalf("Parse returned %#v with its error", top)
			}
			return
		}
		for _, q := range top.Queues {
			if q.Retry != nil {
				if err := q.Retry.Validate(); err != nil {
					t.Fatalf("Parse returned an invalid policy: %v", err)
				}
			}
		}
		_, _ = top.Plan() // planning what was read never panics either
		checkRoundTrip(t, data)
	})
}

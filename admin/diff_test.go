package admin

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/topologyfile"
	"github.com/acemq-go/acemq/transport"
)

// referencePlan is the plan of the contract's reference topology, with the
// family's rungs: orders, orders.new (quorum, dead-lettering, rungs
// orders.new.retry.40s, .80s and .160s) and the rest.
func referencePlan(t *testing.T) []transport.Declaration {
	t.Helper()
	return referencePlanOf(t, contract.ContractRungs)
}

func referencePlanOf(t *testing.T, kind contract.RungKind) []transport.Declaration {
	t.Helper()
	top, err := topologyfile.Read("../examples/topology.yaml")
	if err != nil {
		t.Fatal(err)
	}
	top.Queues[0].Rungs = kind
	plan, err := top.Plan()
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// brokerHolding is the state of a broker that applied plan, as the
// management API shows it: every number a float64.
func brokerHolding(plan []transport.Declaration) State {
	var s State
	for _, d := range plan {
		switch d := d.(type) {
		case transport.Exchange:
			s.Exchanges = append(s.Exchanges, Exchange{Name: d.Name, Type: d.Type, Durable: d.Durable})
		case transport.Queue:
			args := transport.Table{}
			for k, v := range d.Arguments {
				args[k] = normalize(v)
			}
			d.Arguments = args
			s.Queues = append(s.Queues, d)
		case transport.Binding:
			s.Bindings = append(s.Bindings, d)
		}
	}
	return s
}

func queue(s *State, name string) *transport.Queue {
	for i := range s.Queues {
		if s.Queues[i].Name == name {
			return &s.Queues[i]
		}
	}
	panic("no queue " + name)
}

func without[T any](items []T, drop func(T) bool) []T {
	return slices.DeleteFunc(slices.Clone(items), drop)
}

func kinds(r Report) []string {
	var ks []string
	for _, f := range r.Findings {
		ks = append(ks, f.Kind+" "+f.Object)
	}
	return ks
}

func TestDiffInSync(t *testing.T) {
	plan := referencePlan(t)
	live := brokerHolding(plan)
	// What else the vhost holds is not the file's business.
	live.Exchanges = append(live.Exchanges, Exchange{Name: "amq.direct", Type: "direct", Durable: true})
	live.Queues = append(live.Queues, transport.Queue{Name: "other", Type: transport.Classic, Durable: true},
		transport.Queue{Name: "other.retry.5s", Type: transport.Classic, Durable: true})
	live.Bindings = append(live.Bindings, transport.Binding{Queue: "other", Exchange: "", RoutingKey: "other"})
	if r := Diff(plan, live); !r.InSync() {
		t.Errorf("findings on a broker holding the plan: %v", kinds(r))
	}
}

func TestDiffFindings(t *testing.T) {
	plan := referencePlan(t)
	tests := []struct {
		name  string
		drift func(s *State)
		want  []string
		diffs []string // of the first finding
	}{
		{"missing exchange", func(s *State) {
			s.Exchanges = without(s.Exchanges, func(e Exchange) bool { return e.Name == "orders" })
		}, []string{"missing-exchange exchange orders"}, nil},
		{"missing queue", func(s *State) {
			s.Queues = without(s.Queues, func(q transport.Queue) bool { return q.Name == "orders.new" })
		}, []string{"missing-queue queue orders.new"}, nil},
		{"missing rung", func(s *State) {
			s.Queues = without(s.Queues, func(q transport.Queue) bool { return q.Name == "orders.new.retry.80s" })
		}, []string{"missing-rung queue orders.new.retry.80s"}, nil},
		{"missing dead-letter and parked queues", func(s *State) {
			s.Queues = without(s.Queues, func(q transport.Queue) bool {
				return q.Name == "orders.new.dlq" || q.Name == "orders.new.parked"
			})
		}, []string{"missing-dead-letter-queue queue orders.new.dlq", "missing-parked-queue queue orders.new.parked"}, nil},
		{"missing binding", func(s *State) {
			s.Bindings = without(s.Bindings, func(b transport.Binding) bool { return b.Exchange == "orders" })
		}, []string{`missing-binding binding orders -> orders.new under "order.*"`}, nil},
		{"missing retry binding", func(s *State) {
			s.Bindings = without(s.Bindings, func(b transport.Binding) bool { return b.Exchange == contract.RetryExchange })
		}, []string{`missing-retry-binding binding acemq.retry -> orders.new under "orders.new"`}, nil},
		{"exchange type and durability", func(s *State) {
			s.Exchanges[0] = Exchange{Name: "orders", Type: transport.Direct, Durable: false, AutoDelete: true}
		}, []string{"exchange-drift exchange orders"},
			[]string{"type is direct on the broker, topic in the file", "durable is false on the broker, true in the file",
				"auto-delete is true on the broker, false in the file"}},
		{"queue type", func(s *State) {
			q := queue(s, "orders.new")
			q.Type = transport.Classic
		}, []string{"queue-drift queue orders.new"}, []string{"type is classic on the broker, quorum in the file"}},
		{"queue flags and arguments", func(s *State) {
			q := queue(s, "orders.new.dlq")
			q.Durable, q.AutoDelete = false, true
			q.Arguments = transport.Table{"x-max-length": float64(10)}
		}, []string{"queue-drift queue orders.new.dlq"}, []string{
			"durable is false on the broker, true in the file", "auto-delete is true on the broker, false in the file",
			"x-max-length is 10 on the broker, absent in the file"}},
		{"dead-letter argument", func(s *State) {
			delete(queue(s, "orders.new").Arguments, "x-dead-letter-exchange")
		}, []string{"queue-drift queue orders.new"}, []string{`x-dead-letter-exchange is absent on the broker, "acemq.dlx" in the file`}},
		{"rung TTL", func(s *State) {
			queue(s, "orders.new.retry.40s").Arguments["x-message-ttl"] = float64(30000)
		}, []string{"rung-drift queue orders.new.retry.40s"}, []string{"x-message-ttl is 30000 on the broker, 40000 in the file"}},
		{"rung dead-letter target", func(s *State) {
			queue(s, "orders.new.retry.160s").Arguments["x-dead-letter-routing-key"] = "orders.old"
		}, []string{"rung-drift queue orders.new.retry.160s"}, []string{`x-dead-letter-routing-key is "orders.old" on the broker, "orders.new" in the file`}},
		{"rung durability is plain queue drift", func(s *State) {
			queue(s, "orders.new.retry.40s").Durable = false
		}, []string{"queue-drift queue orders.new.retry.40s"}, nil},
		{"leftover rungs", func(s *State) {
			s.Queues = append(s.Queues,
				transport.Queue{Name: "orders.new.retry.5m", Type: transport.Classic, Durable: true},
				transport.Queue{Name: "orders.new.retry.20s", Type: transport.Classic, Durable: true},
				transport.Queue{Name: "orders.new.retry.later", Type: transport.Classic, Durable: true}) // not a delay
			s.Exchanges = s.Exchanges[1:]
		}, []string{"missing-exchange exchange orders", "leftover-rung queue orders.new.retry.5m", "leftover-rung queue orders.new.retry.20s"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			live := brokerHolding(plan)
			tt.drift(&live)
			r := Diff(plan, live)
			if got := kinds(r); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("findings\n got %q\nwant %q", got, tt.want)
			}
			if tt.diffs != nil && !reflect.DeepEqual(r.Findings[0].Differences, tt.diffs) {
				t.Errorf("differences\n got %q\nwant %q", r.Findings[0].Differences, tt.diffs)
			}
			for _, f := range r.Findings {
				if f.Meaning == "" || f.Action == "" {
					t.Errorf("%s %s says neither what it means nor what to do: %+v", f.Kind, f.Object, f)
				}
			}
			if r.InSync() {
				t.Error("InSync with findings")
			}
		})
	}
}

// PRECONDITION_FAILED is the consequence an operator must read for every
// drift of an exchange or queue.
func TestDiffDriftWarnsOfPreconditionFailed(t *testing.T) {
	plan := referencePlan(t)
	live := brokerHolding(plan)
	live.Exchanges[0].Durable = false
	queue(&live, "orders.new").Type = transport.Classic
	queue(&live, "orders.new.retry.40s").Arguments["x-message-ttl"] = float64(1)
	r := Diff(plan, live)
	if len(r.Findings) != 3 {
		t.Fatalf("findings %q", kinds(r))
	}
	for _, f := range r.Findings {
		if !strings.Contains(f.Meaning, "redeclaring it will fail with PRECONDITION_FAILED") {
			t.Errorf("%s: %q", f.Kind, f.Meaning)
		}
	}
}

func TestSameValueAcrossWidths(t *testing.T) {
	for _, pair := range [][2]any{
		{int64(40000), float64(40000)}, {int32(5), float64(5)}, {int(7), uint16(7)}, {[]byte("a"), "a"},
		{transport.Table{"n": int64(1)}, map[string]any{"n": float64(1)}}, {[]any{int8(1)}, []any{float64(1)}},
	} {
		if !sameValue(pair[0], pair[1]) {
			t.Errorf("%T %v and %T %v differ", pair[0], pair[0], pair[1], pair[1])
		}
	}
	for _, pair := range [][2]any{{int64(1), float64(1.5)}, {"1", int64(1)}, {nil, int64(0)}} {
		if sameValue(pair[0], pair[1]) {
			t.Errorf("%T %v and %T %v are the same", pair[0], pair[0], pair[1], pair[1])
		}
	}
}

// Exclusive queues live with their connection: their absence is no drift.
func TestDiffSkipsExclusiveQueues(t *testing.T) {
	plan := []transport.Declaration{
		transport.Exchange{Name: "x", Type: transport.Fanout, Durable: true},
		transport.Queue{Name: "mine", Type: transport.Classic, Exclusive: true},
		transport.Binding{Queue: "mine", Exchange: "x"},
	}
	live := State{Exchanges: []Exchange{{Name: "x", Type: transport.Fanout, Durable: true}}}
	if r := Diff(plan, live); !r.InSync() {
		t.Errorf("findings %q", kinds(r))
	}
}

func TestEndpointFor(t *testing.T) {
	tests := []struct {
		amqp, management string
		want             Endpoint
	}{
		{"amqp://guest:guest@localhost:5672/", "", Endpoint{URL: "http://localhost:15672", Username: "guest", Password: "guest", Vhost: "/"}},
		{"amqp://u:pw1@rabbit.example/shop", "", Endpoint{URL: "http://rabbit.example:15672", Username: "u", Password: "pw1", Vhost: "shop"}},
		{"amqp://u:p@rabbit.example/%2f", "https://admin:s3cret@mgmt.example/rabbit/", Endpoint{URL: "https://mgmt.example/rabbit", Username: "admin", Password: "s3cret", Vhost: "/"}},
		{"amqp://u:pw2@rabbit.example", "http://mgmt.example:15672", Endpoint{URL: "http://mgmt.example:15672", Username: "u", Password: "pw2", Vhost: "/"}},
	}
	for _, tt := range tests {
		got, err := EndpointFor(tt.amqp, tt.management)
		if err != nil || got != tt.want {
			t.Errorf("EndpointFor(%q, %q) = %+v, %v; want %+v", tt.amqp, tt.management, got, err, tt.want)
		}
		if strings.Contains(got.String(), got.Password) {
			t.Errorf("%v shows the password", got)
		}
	}
	for _, bad := range [][2]string{{"amqp://u:hunter2@host/\x7f", ""}, {"amqp://u:p@host/", "ftp://u:hunter2@host"}, {"memory://x", ""}} {
		_, err := EndpointFor(bad[0], bad[1])
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("EndpointFor(%q, %q): %v", bad[0], bad[1], err)
		}
	}
}

// atLeastOncePlan is the reference topology with at-least-once rungs:
// orders.new.retry.quorum.40s, .80s and .160s.
func atLeastOncePlan(t *testing.T) []transport.Declaration {
	t.Helper()
	return referencePlanOf(t, contract.AtLeastOnceRungs)
}

// Both kinds of rung are known: missing ones, drifting ones, leftovers.
// A rung of the other kind for a wait the file has is no leftover but a
// second ladder, another library's consumers' (or Go ones configured
// otherwise): it is said, and left alone by apply.
func TestDiffKnowsBothKindsOfRung(t *testing.T) {
	classic := func(name string) transport.Queue {
		return transport.Queue{Name: name, Type: transport.Classic, Durable: true}
	}
	quorum := func(name string) transport.Queue {
		return transport.Queue{Name: name, Type: transport.Quorum, Durable: true}
	}
	tests := []struct {
		name  string
		plan  func(*testing.T) []transport.Declaration
		drift func(s *State)
		want  []string
	}{
		{"at-least-once plan, the contract rungs of its waits beside", atLeastOncePlan, func(s *State) {
			s.Queues = append(s.Queues, classic("orders.new.retry.40s"), classic("orders.new.retry.80s"), classic("orders.new.retry.160s"))
		}, []string{"other-kind-rung queue orders.new.retry.40s", "other-kind-rung queue orders.new.retry.80s", "other-kind-rung queue orders.new.retry.160s"}},
		{"contract plan, the at-least-once rungs of its waits beside", referencePlan, func(s *State) {
			s.Queues = append(s.Queues, quorum("orders.new.retry.quorum.40s"), quorum("orders.new.retry.quorum.160s"))
		}, []string{"other-kind-rung queue orders.new.retry.quorum.40s", "other-kind-rung queue orders.new.retry.quorum.160s"}},
		{"a plan that declares both kinds", bothKindsPlan, func(*State) {}, nil},
		{"at-least-once plan, a rung missing", atLeastOncePlan, func(s *State) {
			s.Queues = without(s.Queues, func(q transport.Queue) bool { return q.Name == "orders.new.retry.quorum.80s" })
		}, []string{"missing-rung queue orders.new.retry.quorum.80s"}},
		{"at-least-once plan, a rung with another TTL", atLeastOncePlan, func(s *State) {
			queue(s, "orders.new.retry.quorum.40s").Arguments["x-message-ttl"] = float64(1000)
		}, []string{"rung-drift queue orders.new.retry.quorum.40s"}},
		{"at-least-once plan, a rung declared at most once", atLeastOncePlan, func(s *State) {
			delete(queue(s, "orders.new.retry.quorum.40s").Arguments, "x-dead-letter-strategy")
		}, []string{"queue-drift queue orders.new.retry.quorum.40s"}},
		{"leftovers of either kind for waits the file does not have", atLeastOncePlan, func(s *State) {
			s.Queues = append(s.Queues, quorum("orders.new.retry.quorum.5m"), classic("orders.new.retry.20s"))
		}, []string{"leftover-rung queue orders.new.retry.quorum.5m", "leftover-rung queue orders.new.retry.20s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := tt.plan(t)
			live := brokerHolding(plan)
			tt.drift(&live)
			r := Diff(plan, live)
			if got := kinds(r); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("findings\n got %q\nwant %q", got, tt.want)
			}
			if r.InSync() != (len(tt.want) == 0) {
				t.Errorf("InSync = %t with findings %q", r.InSync(), kinds(r))
			}
		})
	}
}

// bothKindsPlan declares the reference ladder of both kinds, on purpose
// (while migrating, say).
func bothKindsPlan(t *testing.T) []transport.Declaration {
	t.Helper()
	return append(referencePlan(t), slices.DeleteFunc(atLeastOncePlan(t), func(d transport.Declaration) bool {
		q, ok := d.(transport.Queue)
		return !ok || !strings.Contains(q.Name, ".retry.quorum.")
	})...)
}

// A rung of the other kind says what it is, that the default consumer
// refuses to start beside contract rungs, and the ways out; apply leaves it.
func TestDiffSaysWhatARungOfTheOtherKindMeans(t *testing.T) {
	plan := atLeastOncePlan(t)
	live := brokerHolding(plan)
	live.Queues = append(live.Queues, transport.Queue{Name: "orders.new.retry.40s", Type: transport.Classic, Durable: true})
	r := Diff(plan, live)
	if len(r.Findings) != 1 {
		t.Fatalf("findings %q", kinds(r))
	}
	f := r.Findings[0]
	for _, want := range []string{"kind contract", "file's at-least-once rung", "two ladders", "refuses to start"} {
		if !strings.Contains(f.Meaning, want) {
			t.Errorf("meaning %q does not say %q", f.Meaning, want)
		}
	}
	for _, want := range []string{"uses at-least-once rungs, delete it once it is empty", "set rungs: contract in the file", "keep both on purpose"} {
		if !strings.Contains(f.Action, want) {
			t.Errorf("action %q does not say %q", f.Action, want)
		}
	}
	if !f.Unplanned() || len(r.Conflicts()) != 0 {
		t.Errorf("unplanned %t, conflicts %q: want an unplanned rung that does not stop apply", f.Unplanned(), r.Conflicts())
	}
}

// A stream declared with x-max-age "604800s" and planned as "7D": RabbitMQ
// 4.3 takes one for the other (its management API shows the first
// declaration's text), so the plan is in sync there; earlier versions
// compare the text, and redeclaring it fails.
func TestDiffComparesMaxAgeAsTheBrokerDoes(t *testing.T) {
	stream := transport.Queue{Name: "events", Type: transport.Stream, Durable: true,
		Arguments: transport.Table{contract.ArgMaxAge: "7D"}}
	plan := []transport.Declaration{stream}
	for _, tt := range []struct {
		version string
		live    string
		inSync  bool
	}{
		{"4.3.6", "604800s", true}, {"4.3.6", "7D", true}, {"4.3.6", "6D", false},
		{"4.0.5", "604800s", false}, {"3.10.8", "604800s", false}, {"", "604800s", false}, {"4.0.5", "7D", true},
	} {
		live := brokerHolding(plan)
		queue(&live, "events").Arguments[contract.ArgMaxAge] = tt.live
		live.RabbitMQVersion = tt.version
		r := Diff(plan, live)
		if r.InSync() != tt.inSync {
			t.Errorf("RabbitMQ %q holding x-max-age %q, planned %q: in sync %t, want %t (%v)", tt.version, tt.live, "7D", r.InSync(), tt.inSync, kinds(r))
		}
	}
}

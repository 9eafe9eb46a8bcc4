package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/internal/testing/conntest"
	"github.com/acemq-go/acemq/pipeline"
	"github.com/acemq-go/acemq/slip"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
)

// waitFor bounds every wait of these tests for a run to get somewhere.
const waitFor = 30 * time.Second

// eachBroker runs test on memory:// (on the system clock: a rung's second
// passes as it does on RabbitMQ) and on the RabbitMQ of ACEMQ_TEST_URL,
// with a pipeline name of its own.
func eachBroker(t *testing.T, test func(t *testing.T, conn *acemq.Conn, name string)) {
	t.Run("memory", func(t *testing.T) {
		conn, err := acemq.New(memory.NewBroker().Connect())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		test(t, conn, "orders")
	})
	t.Run("rabbitmq", func(t *testing.T) {
		test(t, conntest.Connect(t, brokertest.URL(t), t.Name()), brokertest.UniqueName(t, "pipeline"))
	})
}

// declare declares p, its queues (with their ladders' and dead-letter
// queues, rungs of 1s) deleted when t ends.
func declare(t *testing.T, conn *acemq.Conn, p pipeline.Pipeline) {
	t.Helper()
	if err := p.Declare(t.Context(), conn); err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Steps {
		q := p.Queue(s)
		for _, name := range []string{q, contract.DeadLetterQueue(q), contract.ParkedQueue(q), contract.RungQueue(q, time.Second, contract.DefaultRungKind)} {
			t.Cleanup(func() { _, _ = conn.DeleteQueue(context.Background(), name) })
		}
	}
}

func run[T any](t *testing.T, conn *acemq.Conn, p pipeline.Pipeline, step string, h acemq.Handler[T], opts ...acemq.ConsumeOption) *pipeline.Consumer {
	t.Helper()
	c, err := pipeline.Run(t.Context(), conn, p, step, h, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Close(context.Background()) })
	return c
}

// finishes collects the runs that finish, for OnFinish.
type finishes struct {
	mu   sync.Mutex
	runs []pipeline.Finished
	more chan struct{}
}

func newFinishes() *finishes { return &finishes{more: make(chan struct{}, 100)} }

func (f *finishes) add(_ context.Context, r pipeline.Finished) {
	f.mu.Lock()
	f.runs = append(f.runs, r)
	f.mu.Unlock()
	f.more <- struct{}{}
}

// await waits for n runs to have finished.
func (f *finishes) await(t *testing.T, n int) []pipeline.Finished {
	t.Helper()
	deadline := time.After(waitFor)
	for range n {
		select {
		case <-f.more:
		case <-deadline:
			t.Fatalf("%d of %d runs finished in %v", len(f.runs), n, waitFor)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]pipeline.Finished(nil), f.runs...)
}

type Order struct {
	ID       string `json:"id"`
	Valid    bool   `json:"valid,omitempty"`
	Cents    int    `json:"cents,omitempty"`
	Stored   bool   `json:"stored,omitempty"`
	FreeGift bool   `json:"freeGift,omitempty"`
}

// Three steps, the middle one failing at the first attempt of every
// message and retried on its rung: every run arrives at the end with its
// slip complete, in the form it started in.
func TestThreeStepsRetriedInTheMiddle(t *testing.T) {
	for _, form := range []slip.Form{slip.JSONForm, slip.StepForm} {
		t.Run(strings.ReplaceAll(form.String(), " ", "-"), func(t *testing.T) {
			eachBroker(t, func(t *testing.T, conn *acemq.Conn, name string) {
				done := newFinishes()
				p := pipeline.Pipeline{Name: name, Steps: []string{"validate", "enrich", "store"}, Form: form, OnFinish: done.add}
				declare(t, conn, p)
				validate := run(t, conn, p, "validate", func(ctx context.Context, m acemq.Message[Order]) acemq.Decision {
					m.Body.Valid = true
					return pipeline.Next(ctx, m.Body)
				})
				// Retried on the rung P.enrich.retry.1s.
				policy := acemq.Fixed(3, time.Second).WaitInBrokerFrom(time.Second)
				var attempts sync.Map
				enrich := run(t, conn, p, "enrich", func(ctx context.Context, m acemq.Message[Order]) acemq.Decision {
					attempts.Store(m.Body.ID, m.Envelope.Attempt)
					if m.Envelope.Attempt == 1 {
						return acemq.Retry(errors.New("the price list is not loaded yet"))
					}
					m.Body.Cents = 250
					return pipeline.Next(ctx, m.Body)
				}, acemq.WithPolicy(policy))
				store := run(t, conn, p, "store", func(ctx context.Context, m acemq.Message[Order]) acemq.Decision {
					if !m.Body.Valid || m.Body.Cents != 250 {
						return acemq.Reject(fmt.Errorf("order %s arrived as %+v", m.Body.ID, m.Body))
					}
					m.Body.Stored = true
					return pipeline.Next(ctx, m.Body)
				})

				const n = 3
				for i := range n {
					id := fmt.Sprintf("order-%d", i+1)
					if err := p.Start(t.Context(), conn, Order{ID: id}, acemq.WithMessageID(id)); err != nil {
						t.Fatal(err)
					}
				}
				runs := done.await(t, n)
				// Closed, the steps have counted all they settled: a step
				// counts a forward once it is confirmed, which may be after
				// the next step has finished with it.
				for _, c := range []*pipeline.Consumer{validate, enrich, store} {
					if _, err := c.Close(t.Context()); err != nil {
						t.Fatal(err)
					}
				}
				for _, r := range runs {
					if r.Early || r.Step != "store" || !r.Slip.Complete() || r.Slip.Form != form {
						t.Errorf("run %s finished at %s, early %v, complete %v, form %v", r.Envelope.ID, r.Step, r.Early, r.Slip.Complete(), r.Slip.Form)
					}
					if got := r.Slip.Names(); !reflect.DeepEqual(got, p.Steps) {
						t.Errorf("run %s: slip steps %q", r.Envelope.ID, got)
					}
					for _, s := range r.Slip.Done() {
						if (form == slip.JSONForm) == s.CompletedAt.IsZero() {
							t.Errorf("run %s: step %s done at %v", r.Envelope.ID, s.Name, s.CompletedAt)
						}
					}
					if r.Envelope.Type != name || r.Envelope.Attempt != 1 || !strings.HasPrefix(r.Envelope.ID, "order-") {
						t.Errorf("the last step saw type %q, attempt %d, id %q", r.Envelope.Type, r.Envelope.Attempt, r.Envelope.ID)
					}
					if want := `{"id":"` + r.Envelope.ID + `","valid":true,"cents":250,"stored":true}`; string(r.Body) != want {
						t.Errorf("run %s ended with %s, want %s", r.Envelope.ID, r.Body, want)
					}
					if a, _ := attempts.Load(r.Envelope.ID); a != 2 {
						t.Errorf("run %s: enrich's last attempt was %v, want 2", r.Envelope.ID, a)
					}
				}
				if s := enrich.Stats(); s.RetriedOnRung != n || s.RetriedInConsumer != 0 || s.Accepted != n {
					t.Errorf("enrich's stats %+v, want %d retried on the rung and accepted", s, n)
				}
				if v, e, st := validate.Runs(), enrich.Runs(), store.Runs(); v.Forwarded != n || e.Forwarded != n || st.Completed != n {
					t.Errorf("runs: validate %+v, enrich %+v, store %+v", v, e, st)
				}
			})
		})
	}
}

// A slip another library started is continued in its own form: the
// headers the next step receives, as they are on the wire.
func TestContinuedInItsOwnForm(t *testing.T) {
	const javaRun = "0b7f3c52-9e1d-4c8a-a4f0-5d6e7f8091a2"
	tests := []struct {
		name string
		// slip is the message's slip as another library writes it.
		slip func(p string) transport.Table
		// want is what the second step must receive.
		want func(p string) transport.Table
	}{
		{"json", func(p string) transport.Table {
			return transport.Table{contract.HeaderRoutingSlip: fmt.Sprintf(
				`{"steps": [{"exchange": %q, "routingKey": "a", "name": "a"}, {"exchange": %q, "routingKey": "b"}]}`, p, p)}
		}, func(p string) transport.Table {
			return transport.Table{contract.HeaderRoutingSlip: fmt.Sprintf(
				`{"steps":[{"exchange":%q,"routingKey":"b"}],"done":[{"exchange":%q,"routingKey":"a","name":"a","completedAt":"<when>"}]}`, p, p)}
		}},
		{"step", func(string) transport.Table {
			return transport.Table{contract.HeaderRoute: "a,b", contract.HeaderRoutePosition: int32(0), contract.HeaderRouteID: javaRun}
		}, func(string) transport.Table {
			return transport.Table{contract.HeaderRoute: "a,b", contract.HeaderRoutePosition: int64(1), contract.HeaderRouteID: javaRun}
		}},
	}
	second := regexp.MustCompile(`"completedAt":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eachBroker(t, func(t *testing.T, conn *acemq.Conn, name string) {
				p := pipeline.Pipeline{Name: name, Steps: []string{"a", "b"}}
				declare(t, conn, p)
				a := run(t, conn, p, "a", func(ctx context.Context, m acemq.Message[string]) acemq.Decision {
					return pipeline.Next(ctx, strings.ToUpper(m.Body))
				}, acemq.WithCodec(acemq.Text))
				h := tt.slip(name)
				h[contract.HeaderType] = name
				h["tenant"] = "acme"
				publish(t, conn, name, "a", transport.Message{Body: []byte("hello"), ContentType: contract.ContentTypeText, Headers: h})

				d := take(t, conn, p.Queue("b"))
				got := transport.Table{}
				for _, k := range []string{contract.HeaderRoutingSlip, contract.HeaderRoute, contract.HeaderRoutePosition, contract.HeaderRouteID} {
					if v, ok := d.Headers[k]; ok {
						got[k] = v
					}
				}
				if text, ok := got[contract.HeaderRoutingSlip].(string); ok {
					got[contract.HeaderRoutingSlip] = second.ReplaceAllString(text, `"completedAt":"<when>"`)
				}
				if want := tt.want(name); !reflect.DeepEqual(got, want) {
					t.Errorf("the next step received the slip\n%v\nwant\n%v", transport.FormatTable(got), transport.FormatTable(want))
				}
				if string(d.Body) != `"HELLO"` || d.Headers["tenant"] != "acme" || acemq.ReadEnvelope(d.Message).Type != name {
					t.Errorf("the next step received %s with headers %v", d.Body, transport.FormatTable(d.Headers))
				}
				if _, err := a.Close(t.Context()); err != nil { // so that it has counted its forward
					t.Fatal(err)
				}
				if r := a.Runs(); r.Forwarded != 1 {
					t.Errorf("step a: %+v", r)
				}
			})
		})
	}
}

// A step that ends the run: nothing goes on, and OnFinish hears of it.
func TestEndedEarly(t *testing.T) {
	eachBroker(t, func(t *testing.T, conn *acemq.Conn, name string) {
		done := newFinishes()
		p := pipeline.Pipeline{Name: name, Steps: []string{"validate", "enrich", "store"}, OnFinish: done.add}
		declare(t, conn, p)
		validate := run(t, conn, p, "validate", func(ctx context.Context, m acemq.Message[Order]) acemq.Decision {
			if m.Body.FreeGift {
				return pipeline.End(ctx) // nothing to price or store
			}
			return pipeline.Next(ctx, m.Body)
		})
		if err := p.Start(t.Context(), conn, Order{ID: "gift", FreeGift: true}); err != nil {
			t.Fatal(err)
		}
		r := done.await(t, 1)[0]
		if !r.Early || r.Step != "validate" || r.Body != nil {
			t.Errorf("finished %+v", r)
		}
		if cur, _ := r.Slip.Current(); cur.Name != "validate" || len(r.Slip.Done()) != 0 {
			t.Errorf("the slip of a run ended at validate: current %q, done %v", cur.Name, r.Slip.Done())
		}
		if got := validate.Runs(); got != (pipeline.RunStats{Ended: 1}) {
			t.Errorf("validate's runs %+v", got)
		}
		acemqtest.WaitFor(t, validate.Consumer, "the run's end", func(s acemq.Stats) bool { return s.Accepted == 1 })
		if st, err := conn.InspectQueue(t.Context(), p.Queue("enrich")); err != nil || st.Messages != 0 {
			t.Errorf("enrich holds %d messages (%v), want none", st.Messages, err)
		}
	})
}

// A message without a slip, or with one that does not parse or is not at
// this step, is dead-lettered at once, its reason saying why.
func TestBadSlipIsFatal(t *testing.T) {
	tests := []struct {
		name    string
		headers func(p string) transport.Table
		reason  string
	}{
		{"no slip", func(string) transport.Table { return nil }, "carries no routing slip"},
		{"not JSON", func(string) transport.Table { return transport.Table{contract.HeaderRoutingSlip: "a then b"} }, "acemq-routing-slip does not parse"},
		{"position unreadable", func(string) transport.Table {
			return transport.Table{contract.HeaderRoute: "a,b", contract.HeaderRoutePosition: "first"}
		}, "x-acemq-route-position is not a position"},
		{"at another step", func(string) transport.Table {
			return transport.Table{contract.HeaderRoute: "a,b", contract.HeaderRoutePosition: int32(1)}
		}, `its routing slip is at step "b", not at "a"`},
		{"complete already", func(p string) transport.Table {
			return transport.Table{contract.HeaderRoutingSlip: `{"steps":[],"done":[{"exchange":"` + p + `","routingKey":"a"}]}`}
		}, "no step left"},
	}
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(tt.name, " ", "-"), func(t *testing.T) {
			eachBroker(t, func(t *testing.T, conn *acemq.Conn, name string) {
				p := pipeline.Pipeline{Name: name, Steps: []string{"a", "b"}}
				declare(t, conn, p)
				ran := make(chan struct{}, 1)
				a := run(t, conn, p, "a", func(ctx context.Context, _ acemq.Message[string]) acemq.Decision {
					ran <- struct{}{}
					return pipeline.Next(ctx, "")
				}, acemq.WithCodec(acemq.Text), acemq.WithPolicy(acemq.Fixed(5, time.Second)))
				h := tt.headers(name)
				if h == nil {
					h = transport.Table{}
				}
				h[contract.HeaderType] = name
				publish(t, conn, name, "a", transport.Message{Body: []byte("x"), ContentType: contract.ContentTypeText, Headers: h})
				d := take(t, conn, contract.DeadLetterQueue(p.Queue("a")))
				if reason := acemq.ReadEnvelope(d.Message).Error; !strings.Contains(reason, tt.reason) || !strings.HasPrefix(reason, "pipeline "+name+", step a: ") {
					t.Errorf("dead-lettered with %q, want it to say %q", reason, tt.reason)
				}
				acemqtest.WaitFor(t, a.Consumer, "the dead letter's ack", func(s acemq.Stats) bool { return s.DeadLettered == 1 })
				if s := a.Stats(); s.RetriedInConsumer+s.RetriedOnRung != 0 {
					t.Errorf("stats %+v, want one dead letter and no retry", s)
				}
				if a.Runs().Refused != 1 || len(ran) != 0 {
					t.Errorf("runs %+v, handler ran %d times", a.Runs(), len(ran))
				}
			})
		})
	}
}

func TestInvalidPipeline(t *testing.T) {
	for _, p := range []pipeline.Pipeline{
		{Steps: []string{"a"}},
		{Name: "orders"},
		{Name: "orders", Steps: []string{"a", "a"}},
		{Name: "orders", Steps: []string{"a", " "}},
		{Name: "orders", Steps: []string{"a,b"}},
	} {
		if err := p.Validate(); !errors.Is(err, pipeline.ErrInvalidPipeline) {
			t.Errorf("Validate(%+v) = %v, want ErrInvalidPipeline", p, err)
		}
	}
	conn, err := acemq.New(memory.NewBroker().Connect())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	p := pipeline.Pipeline{Name: "orders", Steps: []string{"a"}}
	_, err = pipeline.Run(t.Context(), conn, p, "b", func(ctx context.Context, _ acemq.Message[string]) acemq.Decision { return pipeline.End(ctx) })
	if !errors.Is(err, pipeline.ErrInvalidPipeline) || !strings.Contains(err.Error(), `no step "b"`) {
		t.Errorf("Run of a step the pipeline lacks: %v", err)
	}
}

// The topology is Java's: exchange P direct, queue P.S quorum with no
// arguments, bound under S.
func TestTopology(t *testing.T) {
	p := pipeline.Pipeline{Name: "orders", Steps: []string{"validate", "store"}}
	plan, err := p.Topology().Plan()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range plan {
		got = append(got, d.String())
	}
	want := []transport.Declaration{
		transport.Exchange{Name: "orders", Type: transport.Direct, Durable: true},
		transport.Queue{Name: "orders.validate", Type: transport.Quorum, Durable: true},
		transport.Queue{Name: "orders.store", Type: transport.Quorum, Durable: true},
		transport.Binding{Exchange: "orders", Queue: "orders.validate", RoutingKey: "validate"},
		transport.Binding{Exchange: "orders", Queue: "orders.store", RoutingKey: "store"},
	}
	if !reflect.DeepEqual(plan, want) {
		t.Errorf("plan:\n%s", strings.Join(got, "\n"))
	}
}

func publish(t *testing.T, conn *acemq.Conn, exchange, key string, m transport.Message) {
	t.Helper()
	m.Persistent = true
	sent, err := conn.Publish(t.Context(), exchange, key, m)
	if err == nil {
		err = sent.Wait(t.Context())
	}
	if err != nil {
		t.Fatal(err)
	}
}

// take waits for a message in queue and acks it.
func take(t *testing.T, conn *acemq.Conn, queue string) transport.Delivery {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		d, ok, err := conn.Get(t.Context(), queue)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			if err := d.Ack(); err != nil {
				t.Fatal(err)
			}
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing arrived in %s in %v", queue, waitFor)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The step form's headers are reserved: a publish interceptor sees them on
// a forward but cannot set or change them, while the slip code writes them.
func TestInterceptorsAndTheStepForm(t *testing.T) {
	var seen sync.Map
	stamp := func(_ context.Context, m *acemq.Intercepted) error {
		seen.Store(m.RoutingKey, fmt.Sprintf("%v@%v", m.Headers[contract.HeaderRoute], m.Headers[contract.HeaderRoutePosition]))
		m.Headers["stamped"] = "yes"
		return nil
	}
	conn, err := acemq.New(memory.NewBroker().Connect(), acemq.WithPublishInterceptors(stamp))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	p := pipeline.Pipeline{Name: "orders", Steps: []string{"a", "b"}, Form: slip.StepForm}
	declare(t, conn, p)
	run(t, conn, p, "a", func(ctx context.Context, m acemq.Message[Order]) acemq.Decision { return pipeline.Next(ctx, m.Body) })
	if err := p.Start(t.Context(), conn, Order{ID: "1"}); err != nil {
		t.Fatal(err)
	}
	d := take(t, conn, p.Queue("b"))
	if d.Headers["stamped"] != "yes" || d.Headers[contract.HeaderRoutePosition] != int64(1) {
		t.Errorf("b received %v", transport.FormatTable(d.Headers))
	}
	for key, want := range map[string]string{"a": "a,b@0", "b": "a,b@1"} {
		if got, _ := seen.Load(key); got != want {
			t.Errorf("the interceptor saw the publish to %s with route %v, want %s", key, got, want)
		}
	}

	// An interceptor that moves the slip on is refused.
	skip := func(_ context.Context, m *acemq.Intercepted) error {
		m.Headers[contract.HeaderRoutePosition] = int64(1)
		return nil
	}
	conn2, err := acemq.New(memory.NewBroker().Connect(), acemq.WithPublishInterceptors(skip))
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	declare(t, conn2, p)
	if err := p.Start(t.Context(), conn2, Order{ID: "2"}); !errors.Is(err, acemq.ErrReservedHeader) {
		t.Errorf("Start through an interceptor that sets %s: %v, want ErrReservedHeader", contract.HeaderRoutePosition, err)
	}
}

// A forward the broker does not take is no loss: the step is retried under
// its policy, and when that gives up the message is dead-lettered with the
// reason.
func TestForwardRefused(t *testing.T) {
	eachBroker(t, func(t *testing.T, conn *acemq.Conn, name string) {
		p := pipeline.Pipeline{Name: name, Steps: []string{"a", "b"}}
		declare(t, conn, p)
		if _, err := conn.DeleteQueue(t.Context(), p.Queue("b")); err != nil {
			t.Fatal(err)
		}
		a := run(t, conn, p, "a", func(ctx context.Context, m acemq.Message[Order]) acemq.Decision { return pipeline.Next(ctx, m.Body) },
			acemq.WithPolicy(acemq.Fixed(2, 10*time.Millisecond)))
		if err := p.Start(t.Context(), conn, Order{ID: "1"}); err != nil {
			t.Fatal(err)
		}
		d := take(t, conn, contract.DeadLetterQueue(p.Queue("a")))
		reason := acemq.ReadEnvelope(d.Message).Error
		for _, says := range []string{"exhausted 2 attempt", "forwarding to b", "is the next step's queue declared?"} {
			if !strings.Contains(reason, says) {
				t.Errorf("dead-lettered with %q, want it to say %q", reason, says)
			}
		}
		if string(d.Body) != `{"id":"1"}` {
			t.Errorf("dead-lettered %s", d.Body)
		}
		// The retried copy can be dead-lettered before the original's ack
		// is counted: wait for both.
		acemqtest.WaitFor(t, a.Consumer, "the retry's and the dead letter's acks", func(s acemq.Stats) bool { return s.RetriedInConsumer+s.DeadLettered >= 2 })
		if s, r := a.Stats(), a.Runs(); s.RetriedInConsumer != 1 || s.DeadLettered != 1 || r.Forwarded != 0 {
			t.Errorf("stats %+v, runs %+v", s, r)
		}
	})
}

package admin

import (
	"fmt"
	"github.com/acemq-go/acemq/internal/brokerversion"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

// Kinds of finding.
const (
	MissingExchange        = "missing-exchange"
	MissingQueue           = "missing-queue"
	MissingRung            = "missing-rung"
	MissingDeadLetterQueue = "missing-dead-letter-queue"
	MissingParkedQueue     = "missing-parked-queue"
	MissingBinding         = "missing-binding"
	MissingRetryBinding    = "missing-retry-binding"
	ExchangeDrift          = "exchange-drift"
	QueueDrift             = "queue-drift"
	RungDrift              = "rung-drift"
	LeftoverRung           = "leftover-rung"
	OtherKindRung          = "other-kind-rung"
)

// A Finding is one way the broker differs from the plan.
type Finding struct {
	Kind   string `json:"kind"`
	Object string `json:"object"` // such as "queue orders.new.retry.40s"
	// Differences lists, for drift, each field or argument that differs.
	Differences []string `json:"differences,omitempty"`
	Meaning     string   `json:"meaning"`
	Action      string   `json:"action"`
}

// Unplanned says whether the finding is a queue the broker holds and the
// plan does not declare: a leftover rung, or a rung of the other kind.
// Applying the plan leaves it alone.
func (f Finding) Unplanned() bool { return f.Kind == LeftoverRung || f.Kind == OtherKindRung }

// Report is every finding, in plan order, then the unplanned rungs by name. No
// findings means the broker is in sync with the plan.
type Report struct {
	Findings []Finding `json:"findings"`
}

// InSync says whether the broker holds everything the plan declares, as it
// declares it, and no leftover rung or rung of the other kind.
func (r Report) InSync() bool { return len(r.Findings) == 0 }

// Conflicts are the findings that make declaring the plan fail with
// PRECONDITION_FAILED: exchanges, queues and rungs declared otherwise.
func (r Report) Conflicts() []Finding {
	var c []Finding
	for _, f := range r.Findings {
		if f.Kind == ExchangeDrift || f.Kind == QueueDrift || f.Kind == RungDrift {
			c = append(c, f)
		}
	}
	return c
}

// Diff compares a plan (from acemq.Topology.Plan) with what the broker
// holds. Exclusive queues are left out, with their bindings: they live only
// as long as the connection that declared them.
func Diff(plan []transport.Declaration, live State) Report {
	d := newDiffer(plan, live)
	var r Report
	for _, decl := range plan {
		if f, ok := d.finding(decl); ok {
			r.Findings = append(r.Findings, f)
		}
	}
	r.Findings = append(r.Findings, d.unplannedRungs(live.Queues)...)
	slices.SortStableFunc(r.Findings, func(a, b Finding) int {
		// Unplanned rungs after everything the plan declares; the rest stay in plan order.
		return boolOrder(a.Unplanned()) - boolOrder(b.Unplanned())
	})
	return r
}

// differ holds a plan and the broker's state, indexed by name.
type differ struct {
	liveExchanges map[string]Exchange
	liveQueues    map[string]transport.Queue
	liveBindings  map[transport.Binding]bool
	planned       map[string]transport.Queue
	exclusive     map[string]bool
	rungSources   map[string]bool // source queues bound to acemq.retry
	// maxAgeByValue: the broker takes x-max-age renderings of one age as
	// the same (RabbitMQ 4.3), so "7D" over "604800s" is no difference.
	maxAgeByValue bool
}

func newDiffer(plan []transport.Declaration, live State) *differ {
	d := &differ{liveExchanges: map[string]Exchange{}, liveQueues: map[string]transport.Queue{}, liveBindings: map[transport.Binding]bool{},
		planned: map[string]transport.Queue{}, exclusive: map[string]bool{}, rungSources: map[string]bool{}}
	if v, err := brokerversion.Parse(live.RabbitMQVersion); err == nil {
		d.maxAgeByValue = !v.ComparesMaxAgeAsText()
	}
	for _, e := range live.Exchanges {
		d.liveExchanges[e.Name] = e
	}
	for _, q := range live.Queues {
		d.liveQueues[q.Name] = q
	}
	for _, b := range live.Bindings {
		d.liveBindings[b] = true
	}
	for _, decl := range plan {
		switch decl := decl.(type) {
		case transport.Queue:
			d.planned[decl.Name] = decl
			d.exclusive[decl.Name] = decl.Exclusive
		case transport.Binding:
			if decl.Exchange == contract.RetryExchange && decl.RoutingKey == decl.Queue {
				d.rungSources[decl.Queue] = true
			}
		}
	}
	return d
}

// finding is what is wrong on the broker with one declaration of the
// plan, if anything.
func (d *differ) finding(decl transport.Declaration) (Finding, bool) {
	switch decl := decl.(type) {
	case transport.Exchange:
		return d.exchange(decl)
	case transport.Queue:
		return d.queue(decl)
	case transport.Binding:
		return d.binding(decl)
	}
	return Finding{}, false
}

func (d *differ) exchange(x transport.Exchange) (Finding, bool) {
	got, ok := d.liveExchanges[x.Name]
	if !ok {
		return Finding{Kind: MissingExchange, Object: "exchange " + x.Name,
			Meaning: "nothing can be published to it, and queues bound to it receive nothing from it",
			Action:  "apply the topology to declare it"}, true
	}
	if diffs := exchangeDifferences(x, got); len(diffs) > 0 {
		return Finding{Kind: ExchangeDrift, Object: "exchange " + x.Name, Differences: diffs,
			Meaning: "redeclaring it will fail with PRECONDITION_FAILED, so the topology cannot be applied as it is",
			Action:  "change the file to match the broker, or delete the exchange (its bindings go with it) and apply the topology"}, true
	}
	return Finding{}, false
}

func (d *differ) queue(q transport.Queue) (Finding, bool) {
	if q.Exclusive {
		return Finding{}, false
	}
	got, ok := d.liveQueues[q.Name]
	if !ok {
		return missingQueue(q.Name, d.planned, d.rungSources), true
	}
	diffs := queueDifferences(q, got, d.maxAgeByValue)
	if len(diffs) == 0 {
		return Finding{}, false
	}
	if rung, ok := rungOf(q.Name, d.rungSources); ok && rungTargetDiffers(q, got) {
		source := rung.Source
		return Finding{Kind: RungDrift, Object: "queue " + q.Name, Differences: diffs,
			Meaning: fmt.Sprintf("this rung of %s does not hold its messages for the wait the contract gives it, or does not send them home through %s under %q; redeclaring it will fail with PRECONDITION_FAILED, so consumers of %s cannot declare their ladder",
				source, contract.RetryExchange, source, source),
			Action: "drain the rung (let its messages expire home), delete it and apply the topology"}, true
	}
	return Finding{Kind: QueueDrift, Object: "queue " + q.Name, Differences: diffs,
		Meaning: "redeclaring it will fail with PRECONDITION_FAILED: the service that declares it cannot consume at all",
		Action:  "change the file to match the broker, or move the queue's messages away, delete it and apply the topology"}, true
}

func (d *differ) binding(b transport.Binding) (Finding, bool) {
	if d.exclusive[b.Queue] || d.liveBindings[b] {
		return Finding{}, false
	}
	if d.rungSources[b.Queue] && b.Exchange == contract.RetryExchange && b.RoutingKey == b.Queue {
		return Finding{Kind: MissingRetryBinding, Object: "binding " + bindingName(b),
			Meaning: fmt.Sprintf("every message that expires from a rung of %s is dropped without a word", b.Queue),
			Action:  "apply the topology now; a consumer of the queue declares this binding too when it starts"}, true
	}
	return Finding{Kind: MissingBinding, Object: "binding " + bindingName(b),
		Meaning: fmt.Sprintf("messages published to %s under %q do not reach %s", b.Exchange, b.RoutingKey, b.Queue),
		Action:  "apply the topology to bind it"}, true
}

// unplannedRungs are the broker's rungs of a planned queue that the plan
// does not declare: of the other kind, or left over from an older policy.
func (d *differ) unplannedRungs(live []transport.Queue) []Finding {
	var out []Finding
	for _, q := range live {
		if _, ok := d.planned[q.Name]; ok {
			continue
		}
		rung, ok := rungOf(q.Name, d.planned)
		if !ok {
			continue
		}
		if plannedCounterpart(rung, d.planned) {
			out = append(out, otherKindRung(rung))
			continue
		}
		out = append(out, Finding{Kind: LeftoverRung, Object: "queue " + q.Name,
			Meaning: fmt.Sprintf("a rung of %s that no retry policy in the file produces: consumers no longer send messages to it, but what it holds still comes home to %s when it expires", rung.Source, rung.Source),
			Action:  "once it is empty (its messages expired home), delete it"})
	}
	return out
}

func boolOrder(b bool) int {
	if b {
		return 1
	}
	return 0
}

// missingQueue says what a missing queue means, by the role the contract
// gives its name.
func missingQueue(name string, planned map[string]transport.Queue, rungSources map[string]bool) Finding {
	f := Finding{Kind: MissingQueue, Object: "queue " + name,
		Meaning: "nothing can consume from it, and what is routed to it is dropped",
		Action:  "apply the topology to declare it"}
	if source, ok := sourceOf(name, contract.DeadLetterSuffix, planned); ok {
		f.Kind = MissingDeadLetterQueue
		f.Meaning = fmt.Sprintf("messages of %s that use their last attempt or are rejected have nowhere to go and are dropped", source)
	} else if source, ok := sourceOf(name, contract.ParkedSuffix, planned); ok {
		f.Kind = MissingParkedQueue
		f.Meaning = fmt.Sprintf("messages of %s that cannot be decoded have nowhere to go and are dropped", source)
	} else if rung, ok := rungOf(name, rungSources); ok {
		f.Kind = MissingRung
		f.Meaning = fmt.Sprintf("consumers of %s cannot wait on this rung: they hold the message in the consumer instead, and a crash or deploy cuts the wait short", rung.Source)
		f.Action = "apply the topology, or start a consumer of " + rung.Source + " (it declares its ladder)"
	}
	return f
}

// sourceOf reads name as the queue with suffix (contract.DeadLetterSuffix,
// contract.ParkedSuffix) of a queue the plan declares, and gives that queue.
func sourceOf(name, suffix string, planned map[string]transport.Queue) (string, bool) {
	source, ok := strings.CutSuffix(name, suffix)
	_, declared := planned[source]
	return source, ok && declared
}

// rungOf reads name as a rung, of either kind, of a key of sources.
func rungOf[V any](name string, sources map[string]V) (contract.RungName, bool) {
	return contract.ParseRungName(name, func(source string) bool {
		_, ok := sources[source]
		return ok
	})
}

// otherKindRung is a rung beside the plan's rung of the other kind for the
// same wait: not left over but a second ladder, which consumers of another
// AceMQ library (contract rungs) or Go consumers configured with the other
// kind may use. Consume refuses to declare the default kind beside contract
// rungs unless the kind is chosen, so it is said, with the ways out.
func otherKindRung(rung contract.RungName) Finding {
	source, kind, planKind := rung.Source, rung.Kind, rung.Kind.Other()
	f := Finding{Kind: OtherKindRung, Object: "queue " + rung.String(),
		Meaning: fmt.Sprintf("a rung of %s of kind %s, beside the file's %s rung for the same wait: two ladders for one queue. "+
			"Consumers using %s rungs (those of other AceMQ libraries use contract rungs) retry through it; what it holds still comes home to %s",
			source, kind, planKind, kind, source),
		Action: fmt.Sprintf("if every consumer of %s uses %s rungs, delete it once it is empty (its messages expired home); "+
			"if some must use %s rungs, set rungs: %s in the file (one ladder), or keep both on purpose while migrating",
			source, planKind, kind, kind)}
	if kind != contract.DefaultRungKind {
		f.Meaning += fmt.Sprintf(". A Go consumer of %s that chooses no kind of rungs refuses to start while it exists", source)
	}
	return f
}

// plannedCounterpart says whether the plan declares the rung of the other
// kind for the same wait.
func plannedCounterpart(rung contract.RungName, planned map[string]transport.Queue) bool {
	other := rung
	other.Kind = rung.Kind.Other()
	_, ok := planned[other.String()]
	return ok
}

// rungTargetDiffers says whether the broker's rung waits a different time or
// sends messages somewhere else than the plan's.
func rungTargetDiffers(want, got transport.Queue) bool {
	// The rung arguments the contract fixes (CONTRACT.md section 2).
	for _, k := range []string{contract.ArgMessageTTL, contract.ArgDeadLetterExchange, contract.ArgDeadLetterRoutingKey} {
		if !sameValue(want.Arguments[k], got.Arguments[k]) {
			return true
		}
	}
	return false
}

func exchangeDifferences(want transport.Exchange, got Exchange) []string {
	var diffs []string
	if want.Type != got.Type {
		diffs = append(diffs, fmt.Sprintf("type is %s on the broker, %s in the file", got.Type, want.Type))
	}
	if want.Durable != got.Durable {
		diffs = append(diffs, fmt.Sprintf("durable is %t on the broker, %t in the file", got.Durable, want.Durable))
	}
	if got.AutoDelete {
		diffs = append(diffs, "auto-delete is true on the broker, false in the file")
	}
	if got.Internal {
		diffs = append(diffs, "internal is true on the broker, false in the file")
	}
	return diffs
}

func queueDifferences(want, got transport.Queue, maxAgeByValue bool) []string {
	var diffs []string
	if want.Type != got.Type {
		diffs = append(diffs, fmt.Sprintf("type is %s on the broker, %s in the file", got.Type, want.Type))
	}
	for _, f := range []struct {
		name      string
		want, got bool
	}{{"durable", want.Durable, got.Durable}, {"exclusive", want.Exclusive, got.Exclusive}, {"auto-delete", want.AutoDelete, got.AutoDelete}} {
		if f.want != f.got {
			diffs = append(diffs, fmt.Sprintf("%s is %t on the broker, %t in the file", f.name, f.got, f.want))
		}
	}
	keys := map[string]bool{}
	for k := range want.Arguments {
		keys[k] = true
	}
	for k := range got.Arguments {
		if k != transport.QueueTypeArgument {
			keys[k] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		w, inFile := want.Arguments[k]
		g, onBroker := got.Arguments[k]
		switch {
		case !onBroker:
			diffs = append(diffs, fmt.Sprintf("%s is absent on the broker, %s in the file", k, show(w)))
		case !inFile:
			diffs = append(diffs, fmt.Sprintf("%s is %s on the broker, absent in the file", k, show(g)))
		case k == contract.ArgMaxAge && maxAgeByValue && sameMaxAge(w, g):
		case !sameValue(w, g):
			diffs = append(diffs, fmt.Sprintf("%s is %s on the broker, %s in the file", k, show(g), show(w)))
		}
	}
	return diffs
}

// sameMaxAge reports whether two x-max-age values are valid renderings of
// one age ("7D" and "604800s").
func sameMaxAge(a, b any) bool {
	as, aok := a.(string)
	bs, bok := b.(string)
	if !aok || !bok {
		return false
	}
	ad, aok := contract.ParseMaxAge(as)
	bd, bok := contract.ParseMaxAge(bs)
	return aok && bok && ad == bd
}

// show writes an argument value as FormatTable does: strings quoted.
func show(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v)
}

func bindingName(b transport.Binding) string {
	return fmt.Sprintf("%s -> %s under %q", b.Exchange, b.Queue, b.RoutingKey)
}

// sameValue compares argument values as RabbitMQ does: by value, whatever
// the integer width (the management API returns every number as a JSON
// number, which decodes to float64).
func sameValue(a, b any) bool { return reflect.DeepEqual(normalize(a), normalize(b)) }

func normalize(v any) any {
	switch v := v.(type) {
	case int:
		return float64(v)
	case int8:
		return float64(v)
	case int16:
		return float64(v)
	case int32:
		return float64(v)
	case int64:
		return float64(v)
	case uint8:
		return float64(v)
	case uint16:
		return float64(v)
	case uint32:
		return float64(v)
	case uint64:
		return float64(v)
	case float32:
		return float64(v)
	case []byte:
		return string(v)
	case transport.Table:
		return normalize(map[string]any(v))
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = normalize(x)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, x := range v {
			s[i] = normalize(x)
		}
		return s
	}
	return v
}

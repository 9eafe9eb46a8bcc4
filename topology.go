package acemq

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/retry"
	"github.com/acemq-go/acemq/transport"
)

// Topology is what a service declares: its exchanges, its queues with their
// bindings, dead-lettering and retry ladders (CONTRACT.md section 5). Plan
// turns it into the ordered declarations; Apply sends the same list to a
// broker.
type Topology struct {
	// DeadLetterExchange renames the exchange the topology's dead-lettering
	// queues use (for a shared vhost). "" is DeadLetterExchange (acemq.dlx).
	// Consumers always set messages aside through acemq.dlx.
	DeadLetterExchange string
	Exchanges          []ExchangeSpec
	Queues             []QueueSpec
}

// ExchangeSpec is an exchange of a topology. Exchanges are durable unless
// Transient is set.
type ExchangeSpec struct {
	Name      string
	Type      ExchangeType
	Transient bool
}

// QueueSpec is a queue of a topology. The zero value of every field is the
// contract's default: a durable quorum queue with no dead-lettering and no
// retry ladder.
type QueueSpec struct {
	Name string
	// Type is quorum when empty, or classic for an exclusive, auto-delete or
	// transient queue (those cannot be quorum).
	Type       QueueType
	Transient  bool
	Exclusive  bool
	AutoDelete bool
	// DeadLetter adds x-dead-letter-exchange and x-dead-letter-routing-key
	// (Q.dlq) to the queue and declares Q.dlq and Q.parked.
	DeadLetter bool
	// Retry, when set, adds the queue's retry ladder to the plan.
	Retry *RetryPolicy
	// Rungs is the kind of the ladder's rungs: contract.DefaultRungKind
	// (AtLeastOnceRungs) when empty, or ContractRungs. Consumers of the
	// queue must use the same kind (WithRungs).
	Rungs contract.RungKind
	// Arguments are further queue arguments, such as x-max-length.
	Arguments Table
	Bindings  []BindingSpec
}

// BindingSpec binds the queue it belongs to to an exchange.
type BindingSpec struct {
	Exchange   string
	RoutingKey string
}

// predeclaredExchanges exist on every RabbitMQ vhost and may be bound to
// without being declared.
var predeclaredExchanges = map[string]bool{
	"amq.direct": true, "amq.fanout": true, "amq.topic": true, "amq.headers": true, "amq.match": true,
}

// maxNameBytes is AMQP's limit on an exchange or queue name (a short string).
const maxNameBytes = 255

// ValidationError lists every problem of a topology.
type ValidationError struct {
	Problems []string
}

func (e *ValidationError) Error() string {
	if len(e.Problems) == 1 {
		return "invalid topology: " + e.Problems[0]
	}
	return fmt.Sprintf("invalid topology, %d problems:\n  - %s", len(e.Problems), strings.Join(e.Problems, "\n  - "))
}

func (t Topology) deadLetterExchange() string {
	if t.DeadLetterExchange == "" {
		return contract.DeadLetterExchange
	}
	return t.DeadLetterExchange
}

// QueueType is the type the queue is declared with once defaults apply.
func (q QueueSpec) queueType() transport.QueueType {
	switch {
	case q.Type != "":
		return q.Type
	case q.Exclusive || q.AutoDelete || q.Transient:
		return transport.Classic
	default:
		return transport.Quorum
	}
}

// Declaration is the queue as it is declared, its dead-letter arguments
// included.
func (q QueueSpec) declaration(deadLetterExchange string) transport.Queue {
	args := make(transport.Table, len(q.Arguments)+2)
	for k, v := range q.Arguments {
		args[k] = v
	}
	if q.DeadLetter {
		args[contract.ArgDeadLetterExchange] = deadLetterExchange
		args[contract.ArgDeadLetterRoutingKey] = contract.DeadLetterQueue(q.Name)
	}
	if len(args) == 0 {
		args = nil
	}
	return transport.Queue{Name: q.Name, Type: q.queueType(), Durable: !q.Transient,
		Exclusive: q.Exclusive, AutoDelete: q.AutoDelete, Arguments: args}
}

// Validate reports every problem of the topology at once, or nil. What is
// valid but can lose messages is reported by Warnings instead.
func (t Topology) Validate() error {
	_, problems, _ := t.checked()
	if len(problems) > 0 {
		return &ValidationError{Problems: problems}
	}
	return nil
}

// Warnings are what the topology declares that works but can lose messages
// on the broker's routine events: today, a quorum queue with contract rungs,
// whose messages due home while the broker restarts or the queue's leader
// fails over are dropped. Each names its queue, as a problem does.
func (t Topology) Warnings() []string {
	_, warnings := t.validate()
	return warnings
}

// Plan is the ordered list of declarations: exchanges, then queues, then
// bindings, each in the order the topology first needs it. It is exactly
// what Apply sends. An invalid topology has no plan: the error is a
// *ValidationError.
func (t Topology) Plan() ([]Declaration, error) {
	plan, problems, _ := t.checked()
	if len(problems) > 0 {
		return nil, &ValidationError{Problems: problems}
	}
	return plan, nil
}

// Apply validates the topology and declares its plan on c in order,
// stopping at the first declaration that fails.
func (t Topology) Apply(ctx context.Context, c *Conn) error {
	plan, err := t.Plan()
	if err != nil {
		return err
	}
	return transport.DeclareAll(ctx, c.transport, plan)
}

// checked is the plan with every problem and warning of the topology: the
// problems validate finds, then the conflicts building the plan finds.
func (t Topology) checked() (plan []Declaration, problems, warnings []string) {
	problems, warnings = t.validate()
	plan, conflicts := t.build()
	return plan, append(problems, conflicts...), warnings
}

// build makes the plan: each declaration the topology needs, once,
// exchanges first, then queues, then bindings. Two declarations of one
// name that disagree are conflicts.
func (t Topology) build() (plan []Declaration, conflicts []string) {
	var all []Declaration
	exchanges := map[string]bool{}
	for _, x := range t.Exchanges {
		if !exchanges[x.Name] {
			exchanges[x.Name] = true
			all = append(all, transport.Exchange{Name: x.Name, Type: x.Type, Durable: !x.Transient})
		}
	}
	dlx := t.deadLetterExchange()
	queues := map[string]bool{}
	for _, q := range t.Queues {
		if queues[q.Name] {
			continue
		}
		queues[q.Name] = true
		all = append(all, q.declaration(dlx))
		for _, b := range q.Bindings {
			all = append(all, transport.Binding{Queue: q.Name, Exchange: b.Exchange, RoutingKey: b.RoutingKey})
		}
		if q.DeadLetter {
			all = append(all, retry.DeadLetterDeclarations(q.Name, dlx)...)
		}
		if q.Retry != nil {
			if ladder, err := retry.NewLadder(q.Name, *q.Retry, q.Rungs); err == nil {
				all = append(all, ladder.Declarations()...)
			}
		}
	}
	plan, conflicts = dedupe(all)
	slices.SortStableFunc(plan, func(a, b Declaration) int { return kindOrder(a) - kindOrder(b) })
	return plan, conflicts
}

// validate finds every problem of the topology, in the order of its
// fields, and what is valid but can lose messages (the warnings).
func (t Topology) validate() (problems, warnings []string) {
	v := &validation{}
	declared := map[string]bool{} // exchange names the topology declares
	for i, x := range t.Exchanges {
		subject := fmt.Sprintf("exchange %d (%q)", i+1, x.Name)
		checkName(subject, x.Name, v.problem)
		if declared[x.Name] {
			v.problem("%s: the name is listed twice", subject)
			continue
		}
		switch x.Type {
		case transport.Direct, transport.Fanout, transport.Topic, transport.Headers:
		case "":
			v.problem("%s: the type is missing; it must be direct, fanout, topic or headers", subject)
		default:
			v.problem("%s: the type %q is not one of direct, fanout, topic or headers", subject, x.Type)
		}
		declared[x.Name] = true
	}

	if t.DeadLetterExchange != "" {
		checkName("the dead-letter exchange", t.DeadLetterExchange, v.problem)
		if t.DeadLetterExchange == contract.RetryExchange {
			v.problem("the dead-letter exchange cannot be %s, which routes retries home", contract.RetryExchange)
		}
	}

	queues := map[string]bool{}
	for i, q := range t.Queues {
		subject := fmt.Sprintf("queue %d (%q)", i+1, q.Name)
		checkName(subject, q.Name, v.problem)
		if queues[q.Name] {
			v.problem("%s: the name is listed twice", subject)
			continue
		}
		queues[q.Name] = true
		v.queue(subject, q, declared)
	}
	return v.problems, v.warnings
}

// validation collects a topology's problems and warnings.
type validation struct {
	problems, warnings []string
}

func (v *validation) problem(format string, args ...any) {
	v.problems = append(v.problems, fmt.Sprintf(format, args...))
}

// queue checks q, the topology's queue named by subject, whose bindings
// may name the exchanges declared.
func (v *validation) queue(subject string, q QueueSpec, declared map[string]bool) {
	typ := q.queueType()
	switch typ {
	case transport.Classic, transport.Quorum, transport.Stream:
	default:
		v.problem("%s: the type %q is not one of classic, quorum or stream", subject, q.Type)
	}
	if typ != transport.Classic {
		flags := []struct {
			name string
			set  bool
		}{{"exclusive", q.Exclusive}, {"auto-delete", q.AutoDelete}, {"transient", q.Transient}}
		for _, f := range flags {
			if f.set {
				v.problem("%s: a %s queue cannot be %s; make it classic or drop %s", subject, typ, f.name, f.name)
			}
		}
	}
	if q.Transient && !q.Exclusive {
		v.warnings = append(v.warnings, transientWarning(subject))
	}
	if typ == transport.Stream && (q.DeadLetter || q.Retry != nil) {
		v.problem("%s: a stream cannot dead-letter or retry messages; use a quorum or classic queue", subject)
	}
	if _, ok := q.Arguments[transport.QueueTypeArgument]; ok {
		v.problem("%s: set the queue type with type, not the %s argument", subject, transport.QueueTypeArgument)
	}
	if q.DeadLetter {
		for _, arg := range []string{contract.ArgDeadLetterExchange, contract.ArgDeadLetterRoutingKey} {
			if _, ok := q.Arguments[arg]; ok {
				v.problem("%s: the argument %s conflicts with deadLetter, which sets it; remove one of them", subject, arg)
			}
		}
	}
	v.bindings(subject, q, declared)
	if q.Retry == nil && q.Rungs != "" {
		v.problem("%s: rungs is %q but the queue has no retry policy, so it has no rungs; set retry or drop rungs", subject, q.Rungs)
	}
	if q.Retry != nil && !v.ladder(subject, q, typ) {
		return
	}
	for _, name := range []string{contract.DeadLetterQueue(q.Name), contract.ParkedQueue(q.Name)} {
		if (q.DeadLetter || q.Retry != nil) && len(name) > maxNameBytes {
			v.problem("%s: the queue name %q is longer than %d bytes", subject, name, maxNameBytes)
		}
	}
}

// bindings checks q's bindings: each once, to an exchange that exists.
func (v *validation) bindings(subject string, q QueueSpec, declared map[string]bool) {
	for j, b := range q.Bindings {
		bsubject := fmt.Sprintf("%s, binding %d", subject, j+1)
		if slices.Contains(q.Bindings[:j], b) {
			v.problem("%s: the binding to %q under %q is listed twice", bsubject, b.Exchange, b.RoutingKey)
		}
		switch {
		case b.Exchange == "":
			v.problem("%s: the exchange is blank; the default exchange routes by queue name and cannot be bound", bsubject)
		case !declared[b.Exchange] && !predeclaredExchanges[b.Exchange]:
			v.problem("%s: the exchange %q is not declared in this topology", bsubject, b.Exchange)
		}
	}
}

// ladder checks the retry ladder of q, a queue of type typ; false when
// there is none to check further.
func (v *validation) ladder(subject string, q QueueSpec, typ transport.QueueType) bool {
	ladder, err := retry.NewLadder(q.Name, *q.Retry, q.Rungs)
	if err != nil {
		v.problem("%s: %v", subject, err)
		return false
	}
	for _, w := range q.Retry.Warnings() {
		v.problem("%s: %s", subject, w)
	}
	if !ladder.Empty() && ladder.Kind() == contract.ContractRungs {
		checkOverflow(subject, q, v.problem)
		if typ == transport.Quorum {
			v.warnings = append(v.warnings, fmt.Sprintf("%s: a quorum queue with contract rungs, which RabbitMQ dead-letters from at most once: "+
				"a message due home while the broker restarts (the classic rungs recover before the queue has a leader) "+
				"or while the queue's leader fails over is dropped without a word; rungs: %s keeps it", subject, contract.AtLeastOnceRungs))
		}
	}
	for _, r := range ladder.Rungs() {
		if len(r.Queue) > maxNameBytes {
			v.problem("%s: the rung name %q is longer than %d bytes", subject, r.Queue, maxNameBytes)
		}
	}
	return true
}

// transientWarning warns of a transient queue that is not exclusive: a
// deprecated feature of RabbitMQ (transient_nonexcl_queues). The 4.3.0
// release notes say 4.3 refuses one by default; 4.3.6, as measured, still
// declares it and logs the deprecation; a broker configured with
// deprecated_features.permit.transient_nonexcl_queues = false refuses it.
func transientWarning(subject string) string {
	return subject + ": a transient queue that is not exclusive, which RabbitMQ deprecates (transient_nonexcl_queues): " +
		"RabbitMQ 4.3 logs it, and a broker that no longer permits the feature refuses it; " +
		"make it durable (x-expires deletes it once unused) or exclusive"
}

// checkOverflow refuses a length limit that would drop a message coming
// home from a contract rung: RabbitMQ dead-letters from a classic rung at
// most once, so when the full source queue rejects it, nobody hears of it.
// (An at-least-once rung keeps it until the queue has room.)
func checkOverflow(subject string, q QueueSpec, problem func(string, ...any)) {
	_, maxLen := q.Arguments[contract.ArgMaxLength]
	_, maxBytes := q.Arguments[contract.ArgMaxLengthBytes]
	if !maxLen && !maxBytes {
		return
	}
	_, ownDLX := q.Arguments[contract.ArgDeadLetterExchange]
	switch overflow, _ := q.Arguments[contract.ArgOverflow].(string); {
	case overflow == contract.OverflowRejectPublish:
		problem("%s: x-overflow reject-publish drops without a word a message that comes home from a rung while the queue is full "+
			"(RabbitMQ dead-letters at most once, with no confirm); use reject-publish-dlx with deadLetter, or drop-head", subject)
	case overflow == contract.OverflowRejectPublishDLX && !q.DeadLetter && !ownDLX:
		problem("%s: x-overflow reject-publish-dlx without a dead-letter exchange drops without a word a message that comes home "+
			"from a rung while the queue is full; set deadLetter", subject)
	}
}

func checkName(subject, name string, problem func(string, ...any)) {
	switch {
	case strings.TrimSpace(name) == "":
		problem("%s: the name is blank", subject)
	case strings.HasPrefix(name, "amq."):
		problem("%s: names starting with amq. are reserved by RabbitMQ", subject)
	case len(name) > maxNameBytes:
		problem("%s: the name is longer than %d bytes", subject, maxNameBytes)
	}
}

// identity is what makes two declarations the same object on a broker.
func identity(d Declaration) string {
	switch d := d.(type) {
	case transport.Binding:
		return "binding\x00" + d.Queue + "\x00" + d.Exchange + "\x00" + d.RoutingKey
	case transport.Exchange:
		return "exchange\x00" + d.Name
	case transport.Queue:
		return "queue\x00" + d.Name
	}
	panic(fmt.Sprintf("unknown declaration %T", d))
}

// dedupe keeps the first of identical declarations (a dead-letter exchange
// many queues share, say) and reports two different declarations of one
// exchange or queue.
func dedupe(all []Declaration) ([]Declaration, []string) {
	var plan []Declaration
	var conflicts []string
	first := map[string]Declaration{}
	for _, d := range all {
		id := identity(d)
		prev, seen := first[id]
		switch {
		case !seen:
			first[id] = d
			plan = append(plan, d)
		case prev.String() != d.String(): // String shows every field and argument
			conflicts = append(conflicts, fmt.Sprintf("%s is declared two ways, as %s and as %s; RabbitMQ refuses the second with PRECONDITION_FAILED",
				strings.Split(d.String(), " (")[0], prev, d))
		}
	}
	return plan, conflicts
}

func kindOrder(d Declaration) int {
	switch d.Kind() {
	case "exchange":
		return 0
	case "queue":
		return 1
	}
	return 2
}

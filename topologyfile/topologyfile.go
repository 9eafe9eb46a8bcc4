// Package topologyfile reads a topology from a YAML file, so that an operator
// can review (acemq topology plan) or apply what a service declares without
// reading its code:
//
//	deadLetterExchange: my.dlx        # optional; acemq.dlx when absent
//	exchanges:
//	  - {name: orders, type: topic}   # durable unless durable: false
//	queues:
//	  - name: orders.new
//	    type: quorum                  # classic, quorum or stream; see acemq.QueueSpec
//	    durable: true                 # default true
//	    exclusive: false
//	    autoDelete: false
//	    deadLetter: true
//	    retry: "exponential(6, 10s, 5m)"   # the notation of acemq.ParsePolicy
//	    threshold: 1m                 # overrides the policy's waitInBrokerFrom
//	    rungs: contract               # or at-least-once, the default; see contract.RungKind
//	    arguments: {x-max-length: 1000}
//	    bindings:
//	      - {exchange: orders, routingKey: "order.*"}
//
// Parse reports the problems of the file's form, each with its line: unknown
// keys, values of the wrong kind, a retry notation or threshold that does not
// read, a kind of rungs that is unknown or given without retry. It does not validate the topology itself (names declared, queue types
// that cannot be combined, conflicting arguments): Topology.Validate does.
package topologyfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

// Error is a topology file that could not be read, with every problem found.
type Error struct {
	// Path is the file's path when it was read with Read, "" for Parse.
	Path     string
	Problems []Problem
}

// Problem is one thing wrong in a topology file.
type Problem struct {
	// Line is the 1-based line the problem is on; 0 when it has no one line.
	Line    int
	Message string
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("line %d: %s", p.Line, p.Message)
	}
	return p.Message
}

func (e *Error) Error() string {
	subject := "topology file"
	if e.Path != "" {
		subject += " " + e.Path
	}
	if len(e.Problems) == 1 {
		if e.Problems[0].Line > 0 {
			return subject + " " + e.Problems[0].String()
		}
		return subject + ": " + e.Problems[0].Message
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d problems:", subject, len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  - " + p.String())
	}
	return b.String()
}

// Read reads the topology file at path. A file that cannot be opened is an
// error wrapping the os error (errors.Is(err, fs.ErrNotExist) works); one that
// cannot be parsed is an *Error naming path.
func Read(path string) (acemq.Topology, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return acemq.Topology{}, fmt.Errorf("topology file: %w", err)
	}
	t, err := Parse(data)
	if perr, ok := errors.AsType[*Error](err); ok {
		perr.Path = path
	}
	return t, err
}

// The documents below are the file's shape. Their yaml tags are the file's
// keys; the decoder refuses any other key.

type fileDoc struct {
	DeadLetterExchange string        `yaml:"deadLetterExchange"`
	Exchanges          []exchangeDoc `yaml:"exchanges"`
	Queues             []queueDoc    `yaml:"queues"`
}

type exchangeDoc struct {
	Name    string                 `yaml:"name"`
	Type    transport.ExchangeType `yaml:"type"`
	Durable *bool                  `yaml:"durable"`
}

type queueDoc struct {
	Name       string              `yaml:"name"`
	Type       transport.QueueType `yaml:"type"`
	Durable    *bool               `yaml:"durable"`
	Exclusive  bool                `yaml:"exclusive"`
	AutoDelete bool                `yaml:"autoDelete"`
	DeadLetter bool                `yaml:"deadLetter"`
	// Kept as nodes, so that a problem with one names its line.
	Retry     yaml.Node    `yaml:"retry"`
	Threshold yaml.Node    `yaml:"threshold"`
	Rungs     yaml.Node    `yaml:"rungs"`
	Arguments yaml.Node    `yaml:"arguments"`
	Bindings  []bindingDoc `yaml:"bindings"`
}

type bindingDoc struct {
	Exchange   string `yaml:"exchange"`
	RoutingKey string `yaml:"routingKey"`
}

// Parse reads a topology from YAML: exactly one document, a mapping of
// deadLetterExchange, exchanges and queues. Any error is an *Error listing
// every problem found, each with its line where the YAML library gives one.
func Parse(data []byte) (acemq.Topology, error) {
	var p parser
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var doc *fileDoc // stays nil for an empty or null document
	switch err := dec.Decode(&doc); {
	case err != nil && !errors.Is(err, io.EOF):
		p.yamlError(err)
	case doc == nil:
		p.add(0, "the file is empty; it must hold a mapping with exchanges and queues")
	}
	if len(p.problems) == 0 {
		var next yaml.Node
		if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
			p.add(next.Line, "a topology file holds exactly one YAML document")
		}
	}
	if doc == nil {
		return acemq.Topology{}, &Error{Problems: p.problems}
	}
	t := p.topology(*doc) // after type errors too, to report every problem
	if len(p.problems) > 0 {
		slices.SortStableFunc(p.problems, func(a, b Problem) int { return a.Line - b.Line })
		return acemq.Topology{}, &Error{Problems: p.problems}
	}
	return t, nil
}

type parser struct{ problems []Problem }

func (p *parser) add(line int, format string, args ...any) {
	p.problems = append(p.problems, Problem{Line: line, Message: fmt.Sprintf(format, args...)})
}

func (p *parser) topology(doc fileDoc) acemq.Topology {
	t := acemq.Topology{DeadLetterExchange: doc.DeadLetterExchange}
	for _, x := range doc.Exchanges {
		t.Exchanges = append(t.Exchanges, acemq.ExchangeSpec{Name: x.Name, Type: x.Type, Transient: isFalse(x.Durable)})
	}
	for i, q := range doc.Queues {
		subject := fmt.Sprintf("queue %d", i+1)
		if q.Name != "" {
			subject = fmt.Sprintf("queue %q", q.Name)
		}
		spec := acemq.QueueSpec{
			Name:       q.Name,
			Type:       q.Type,
			Transient:  isFalse(q.Durable),
			Exclusive:  q.Exclusive,
			AutoDelete: q.AutoDelete,
			DeadLetter: q.DeadLetter,
			Retry:      p.retry(subject, &q.Retry, &q.Threshold),
			Rungs:      p.rungs(subject, &q.Rungs, &q.Retry),
			Arguments:  p.arguments(subject, &q.Arguments),
		}
		for _, b := range q.Bindings {
			spec.Bindings = append(spec.Bindings, acemq.BindingSpec(b))
		}
		t.Queues = append(t.Queues, spec)
	}
	return t
}

func isFalse(b *bool) bool { return b != nil && !*b }

// retry reads a queue's retry policy and threshold: nil when there is none
// or it does not read.
func (p *parser) retry(subject string, retryNode, thresholdNode *yaml.Node) *acemq.RetryPolicy {
	notation, hasRetry := p.scalar(subject, "retry", retryNode)
	threshold, hasThreshold := p.scalar(subject, "threshold", thresholdNode)
	if hasThreshold && retryNode.IsZero() {
		p.add(thresholdNode.Line, "%s: threshold is given without retry; it applies to a retry policy, so add retry or remove threshold", subject)
		return nil
	}
	if !hasRetry {
		return nil
	}
	policy, err := acemq.ParsePolicy(notation)
	if err != nil {
		p.add(retryNode.Line, "%s: %v", subject, err)
		return nil
	}
	if hasThreshold {
		d, err := time.ParseDuration(threshold)
		if err != nil {
			p.add(thresholdNode.Line, "%s: threshold %q is not a duration; write one in Go's syntax, such as 30s, 1m or 1h30m", subject, threshold)
			return nil
		}
		policy = policy.WaitInBrokerFrom(d)
		if err := policy.Validate(); err != nil {
			p.add(thresholdNode.Line, "%s: with threshold %s: %v", subject, threshold, err)
			return nil
		}
	}
	return &policy
}

// rungs reads the kind of a queue's rungs; "" when not given or it does
// not read.
func (p *parser) rungs(subject string, rungsNode, retryNode *yaml.Node) contract.RungKind {
	s, ok := p.scalar(subject, "rungs", rungsNode)
	if !ok {
		return ""
	}
	if retryNode.IsZero() {
		p.add(rungsNode.Line, "%s: rungs is given without retry; it chooses the kind of a retry policy's rungs, so add retry or remove rungs", subject)
		return ""
	}
	kind, err := contract.ParseRungKind(s)
	if err != nil {
		p.add(rungsNode.Line, "%s: %v", subject, err)
		return ""
	}
	return kind
}

// scalar reads an optional string-valued key; absent or null is not given.
func (p *parser) scalar(subject, key string, n *yaml.Node) (string, bool) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.IsZero() || n.ShortTag() == "!!null" {
		return "", false
	}
	if n.Kind != yaml.ScalarNode {
		p.add(n.Line, "%s: %s must be a single value, found %s", subject, key, kindName(n))
		return "", false
	}
	return n.Value, true
}

// arguments reads a queue's arguments as AMQP carries them: integers as
// int64 (AMQP longs), nested mappings as transport.Tables.
func (p *parser) arguments(subject string, n *yaml.Node) transport.Table {
	if n.IsZero() || n.ShortTag() == "!!null" {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		p.add(n.Line, "%s: arguments must be a mapping of names to values, such as {x-max-length: 1000}, found %s", subject, kindName(n))
		return nil
	}
	var raw map[string]any
	if err := n.Decode(&raw); err != nil {
		p.add(n.Line, "%s: arguments: %s", subject, strings.TrimPrefix(err.Error(), "yaml: "))
		return nil
	}
	if len(raw) == 0 {
		return nil
	}
	table, err := amqpValue("", raw)
	if err != nil {
		p.add(n.Line, "%s: argument %v", subject, err)
		return nil
	}
	return table.(transport.Table)
}

// amqpValue converts a decoded YAML value to one an AMQP table carries;
// path names it in errors.
func amqpValue(path string, v any) (any, error) {
	switch v := v.(type) {
	case string, bool, int64, time.Time:
		return v, nil
	case int:
		return int64(v), nil
	case uint64:
		if v > math.MaxInt64 {
			return nil, fmt.Errorf("%s: %d does not fit an AMQP long (a signed 64-bit integer)", path, v)
		}
		return int64(v), nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s: %v is not a finite number", path, v)
		}
		return v, nil
	case map[string]any:
		t := make(transport.Table, len(v))
		for k, x := range v {
			name := k
			if path != "" {
				name = path + "." + k
			}
			x, err := amqpValue(name, x)
			if err != nil {
				return nil, err
			}
			t[k] = x
		}
		return t, nil
	case []any:
		l := make([]any, len(v))
		for i, x := range v {
			x, err := amqpValue(fmt.Sprintf("%s[%d]", path, i), x)
			if err != nil {
				return nil, err
			}
			l[i] = x
		}
		return l, nil
	case nil:
		return nil, fmt.Errorf("%s has no value; give it one or leave it out", path)
	}
	return nil, fmt.Errorf("%s holds a %T, which AMQP cannot carry", path, v)
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return strconv.Quote(n.Value)
}

var (
	lineRE       = regexp.MustCompile(`(?s)^line (\d+): (.*)$`)
	unknownKeyRE = regexp.MustCompile(`^field (.*) not found in type topologyfile\.(\w+)$`)
	mismatchRE   = regexp.MustCompile("(?s)^cannot unmarshal !!(\\w+)(?: `(.*)`)? into (.+)$")
)

// expected says what a Go type of the documents is, in the file's terms.
var expected = map[string]string{
	"topologyfile.fileDoc":       "a mapping with deadLetterExchange, exchanges and queues",
	"topologyfile.exchangeDoc":   "an exchange, a mapping with name, type and durable",
	"topologyfile.queueDoc":      "a queue, a mapping with name, type, bindings and the like",
	"topologyfile.bindingDoc":    "a binding, a mapping with exchange and routingKey",
	"[]topologyfile.exchangeDoc": "a list of exchanges",
	"[]topologyfile.queueDoc":    "a list of queues",
	"[]topologyfile.bindingDoc":  "a list of bindings",
	"transport.ExchangeType":     "an exchange type (direct, fanout, topic or headers)",
	"transport.QueueType":        "a queue type (classic, quorum or stream)",
	"string":                     "a string",
	"bool":                       "true or false",
}

// docNames say what each document is, in messages about its keys.
var docNames = map[string]string{
	"fileDoc": "the topology", "exchangeDoc": "an exchange", "queueDoc": "a queue", "bindingDoc": "a binding",
}

var docTypes = map[string]reflect.Type{
	"fileDoc":     reflect.TypeFor[fileDoc](),
	"exchangeDoc": reflect.TypeFor[exchangeDoc](),
	"queueDoc":    reflect.TypeFor[queueDoc](),
	"bindingDoc":  reflect.TypeFor[bindingDoc](),
}

// yamlError records the YAML library's error as problems with their lines,
// naming unknown keys in the file's terms.
func (p *parser) yamlError(err error) {
	messages := []string{strings.TrimPrefix(err.Error(), "yaml: ")}
	if te, ok := errors.AsType[*yaml.TypeError](err); ok {
		messages = te.Errors
	}
	for _, msg := range messages {
		line := 0
		if m := lineRE.FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = m[2]
		}
		if m := unknownKeyRE.FindStringSubmatch(msg); m != nil {
			msg = fmt.Sprintf("unknown key %q in %s; the keys are %s", m[1], docNames[m[2]], strings.Join(keysOf(docTypes[m[2]]), ", "))
		} else if m := mismatchRE.FindStringSubmatch(msg); m != nil && expected[m[3]] != "" {
			found := strconv.Quote(m[2])
			switch m[1] {
			case "map":
				found = "a mapping"
			case "seq":
				found = "a list"
			}
			msg = fmt.Sprintf("expected %s, found %s", expected[m[3]], found)
		}
		p.add(line, "%s", msg)
	}
}

// keysOf lists the keys a document takes, from its yaml tags.
func keysOf(t reflect.Type) []string {
	keys := make([]string, t.NumField())
	for i := range keys {
		keys[i] = t.Field(i).Tag.Get("yaml")
	}
	return keys
}

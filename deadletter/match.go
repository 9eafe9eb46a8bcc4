package deadletter

import (
	"fmt"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"

	"github.com/acemq-go/acemq"
)

// Matcher selects messages with an expression (the expr language,
// expr-lang.org) over the fields of Fields, such as
//
//	reason contains "timeout" && attempt >= 3
//	reasonClass == "delivery_limit"
//	type == "order.created" && headers["tenant"] == "acme"
//	age > duration("24h") || body matches "\"sku\": ?\"X-"
type Matcher struct {
	source  string
	program *vm.Program
	ids     map[string]bool // MatchIDs' set; nil for an expression
	counted map[string]int  // MatchIdentities' counts left; nil otherwise
}

// Fields are what a match expression sees of a message, read leniently
// from its envelope as a handler would.
type Fields struct {
	ID      string `expr:"id"`
	Type    string `expr:"type"`
	Attempt int    `expr:"attempt"`
	// Reason is why it was set aside (ReasonOf): x-acemq-error, or the
	// broker's reason in words; ReasonClass is its class.
	Reason      string `expr:"reason"`
	ReasonClass string `expr:"reasonClass"`
	// ReasonTemplate is Reason with its ids and numbers folded
	// (ReasonTemplate): the group it is counted in.
	ReasonTemplate string `expr:"reasonTemplate"`
	Origin         string `expr:"origin"`
	Correlation    string `expr:"correlation"`
	// Age since first seen; -1ns when that is not known.
	Age         time.Duration `expr:"age"`
	ReplayCount int           `expr:"replayCount"`
	ContentType string        `expr:"contentType"`
	// Headers are the application headers: every header but x-acemq-*.
	Headers map[string]any `expr:"headers"`
	Body    string         `expr:"body"`
}

// Compile checks expression once: its names and types, and that it gives
// true or false.
func Compile(expression string) (*Matcher, error) {
	p, err := expr.Compile(expression, expr.Env(Fields{}), expr.AsBool())
	if err != nil {
		return nil, fmt.Errorf("the match expression %q does not compile: %w", expression, err)
	}
	return &Matcher{source: expression, program: p}, nil
}

// MatchIDs selects the messages whose id (x-acemq-id, else the message id,
// as Fields.ID reads it) is one of ids: the messages a person picked from a
// listing. A message without an id is never selected.
func MatchIDs(ids ...string) *Matcher {
	m := &Matcher{source: fmt.Sprintf("id in %q", ids), ids: make(map[string]bool, len(ids))}
	for _, id := range ids {
		if id != "" {
			m.ids[id] = true
		}
	}
	return m
}

// String is the expression (for MatchIDs, one that selects the same ids).
func (m *Matcher) String() string { return m.source }

// Match says whether the expression holds for msg, found in queue (see
// ReasonOf). A nil Matcher matches everything.
func (m *Matcher) Match(queue string, msg acemq.RawMessage, now time.Time) (bool, error) {
	if m == nil {
		return true, nil
	}
	if m.ids != nil {
		return m.ids[acemq.ReadEnvelope(msg).ID], nil
	}
	if m.counted != nil {
		id := Identity(msg)
		if m.counted[id] == 0 {
			return false, nil
		}
		m.counted[id]--
		return true, nil
	}
	return m.MatchFields(FieldsOf(queue, msg, now))
}

// MatchFields says whether the expression holds for a message's fields,
// as read by FieldsOf (a view's snapshot keeps them, so that it filters
// without reading the queue again). A nil Matcher matches everything.
func (m *Matcher) MatchFields(f Fields) (bool, error) {
	if m == nil {
		return true, nil
	}
	if m.ids != nil {
		return m.ids[f.ID], nil
	}
	out, err := expr.Run(m.program, f)
	if err != nil {
		return false, fmt.Errorf("the match expression %q: %w", m.source, err)
	}
	return out.(bool), nil // AsBool guarantees it
}

// FieldsOf reads the fields of msg, found in queue; now gives its age.
func FieldsOf(queue string, msg acemq.RawMessage, now time.Time) Fields {
	e := acemq.ReadEnvelope(msg)
	reason := ReasonOf(queue, msg)
	return Fields{
		ID:             e.ID,
		Type:           e.Type,
		Attempt:        e.Attempt,
		Reason:         reason.Text,
		ReasonClass:    string(reason.Class),
		ReasonTemplate: ReasonTemplate(reason.Text),
		Origin:         e.Origin,
		Correlation:    e.Correlation,
		Age:            e.Age(now),
		ReplayCount:    ReadReplayed(msg.Headers).Count,
		ContentType:    msg.ContentType,
		Headers:        e.Headers,
		Body:           string(msg.Body),
	}
}

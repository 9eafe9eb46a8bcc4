// Package slip reads and writes routing slips (CONTRACT.md section 13): the
// list of steps a message goes through, carried on the message itself, in
// either of the family's two wire forms.
//
// The JSON form, which the Go, Python and Ruby libraries write, is one
// application header, acemq-routing-slip, holding the steps still to come
// and those done:
//
//	{"steps":[{"exchange":"orders","routingKey":"store","name":"store"}],
//	 "done":[{"exchange":"orders","routingKey":"validate","name":"validate","completedAt":"2026-09-09T14:03:11Z"}]}
//
// The step form, which the Java library writes, is three reserved headers:
// x-acemq-route (every step's name, done and remaining, comma-joined),
// x-acemq-route-position (the 0-based index of the current step) and
// x-acemq-route-id (one id per run). Its steps are names only: step S of
// pipeline P is routing key S on exchange P, and P is the message's type.
//
// A slip keeps the form it arrived in: Read it, Advance it past the current
// step, and Write it on the message sent to the next one. A slip that does
// not parse is an error matching ErrInvalid, which a consumer treats as
// fatal (package pipeline does): retrying cannot mend it.
package slip

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
)

// ErrInvalid is matched by a slip that does not parse, or that could not be
// written in its form.
var ErrInvalid = errors.New("invalid routing slip")

// Form is one of the two wire forms of a slip.
type Form uint8

const (
	// JSONForm is the acemq-routing-slip header, as the Go, Python and Ruby
	// libraries write it: the zero Form.
	JSONForm Form = iota
	// StepForm is the x-acemq-route, -position and -id headers, as the
	// Java library writes it.
	StepForm
)

func (f Form) String() string {
	if f == StepForm {
		return "step form"
	}
	return "JSON form"
}

// Step is one step of a slip: where a message goes for it.
type Step struct {
	// Exchange and RoutingKey are where the message is published for the
	// step ("" is the default exchange, which routes by queue name).
	Exchange   string
	RoutingKey string
	// Name names the step; optional in the JSON form, the whole step in the
	// step form.
	Name string
	// CompletedAt is when the step was done, to the second, in the JSON
	// form; zero for a step not done, and in the step form, which keeps no
	// times.
	CompletedAt time.Time
}

// Slip is a routing slip: every step, done and remaining, and which one the
// message is at. The zero Slip has no steps.
type Slip struct {
	Form  Form
	Steps []Step
	// Position is the index of the current step in Steps; len(Steps) when
	// every step is done.
	Position int
	// ID identifies the run in the step form; "" in the JSON form, which
	// has none.
	ID string
}

// New is a slip in the JSON form through steps, at the first. Every step
// needs an exchange or a routing key.
func New(steps ...Step) (Slip, error) {
	s := Slip{Form: JSONForm, Steps: slices.Clone(steps)}
	for i := range s.Steps {
		s.Steps[i].CompletedAt = time.Time{}
	}
	if err := s.check(); err != nil {
		return Slip{}, err
	}
	return s, nil
}

// NewRoute is a slip in the step form through the named steps of pipeline,
// at the first, with a new run id: a UUID with dashes, as the Java library
// writes it (.NET writes 32 hex digits without; both are read). A name
// must not be blank or hold a comma, which separates them on the wire.
func NewRoute(pipeline string, names ...string) (Slip, error) {
	s := Slip{Form: StepForm, ID: uuid.NewString(), Steps: make([]Step, len(names))}
	for i, n := range names {
		s.Steps[i] = Step{Exchange: pipeline, RoutingKey: n, Name: n}
	}
	if err := s.check(); err != nil {
		return Slip{}, err
	}
	return s, nil
}

// Current is the step the message is at; false once every step is done.
func (s Slip) Current() (Step, bool) {
	if s.Position < 0 || s.Position >= len(s.Steps) {
		return Step{}, false
	}
	return s.Steps[s.Position], true
}

// Done are the steps before the current one.
func (s Slip) Done() []Step { return s.Steps[:min(max(s.Position, 0), len(s.Steps))] }

// Remaining are the current step and those after it.
func (s Slip) Remaining() []Step { return s.Steps[min(max(s.Position, 0), len(s.Steps)):] }

// Complete reports whether every step is done.
func (s Slip) Complete() bool { return s.Position >= len(s.Steps) }

// Advance is the slip with the current step done at now (kept to the
// second, in UTC) and the message at the next step, in the same form and
// run; s itself is not changed. A complete slip is returned as it is.
func (s Slip) Advance(now time.Time) Slip {
	if _, ok := s.Current(); !ok {
		return s
	}
	s.Steps = slices.Clone(s.Steps)
	if s.Form == JSONForm {
		s.Steps[s.Position].CompletedAt = now.UTC().Truncate(time.Second)
	}
	s.Position++
	return s
}

// Names are the steps' names, or where a step has none, its routing key.
func (s Slip) Names() []string {
	names := make([]string, len(s.Steps))
	for i, st := range s.Steps {
		names[i] = st.label()
	}
	return names
}

func (st Step) label() string {
	if st.Name != "" {
		return st.Name
	}
	return st.RoutingKey
}

// Read reads the slip a message carries, in whichever form it came: false
// when it carries none. A slip that does not parse, or one that comes in
// both forms at once, is an error matching ErrInvalid. The step form's
// steps are resolved in the pipeline the message's type names.
func Read(env acemq.Envelope) (Slip, bool, error) {
	v, inJSON := env.Headers[contract.HeaderRoutingSlip]
	if inJSON && isEmpty(v) {
		inJSON = false // an empty value counts as absent
	}
	inSteps := len(env.Route.Steps) > 0 || env.Route.ID != "" || env.Route.Position != 0
	switch {
	case inJSON && inSteps:
		return Slip{}, false, fmt.Errorf("%w: the message carries both %s and %s", ErrInvalid, contract.HeaderRoutingSlip, contract.HeaderRoute)
	case inJSON:
		s, err := parseJSON(v)
		return s, err == nil, err
	case inSteps:
		s, err := fromRoute(env.Route, env.Type)
		return s, err == nil, err
	}
	return Slip{}, false, nil
}

// wireStep is a step of the JSON form as it is written: the fields in this
// order, name and completedAt left out when empty.
type wireStep struct {
	Exchange    string `json:"exchange"`
	RoutingKey  string `json:"routingKey"`
	Name        string `json:"name,omitempty"`
	CompletedAt string `json:"completedAt,omitempty"`
}

type wireSlip struct {
	Steps []wireStep `json:"steps"`
	Done  []wireStep `json:"done,omitempty"`
}

func parseJSON(v any) (Slip, error) {
	var text []byte
	switch v := v.(type) {
	case string:
		text = []byte(v)
	case []byte:
		text = v
	default:
		return Slip{}, fmt.Errorf("%w: %s is a %T, not a JSON text", ErrInvalid, contract.HeaderRoutingSlip, v)
	}
	var w wireSlip
	if err := json.Unmarshal(text, &w); err != nil {
		return Slip{}, fmt.Errorf("%w: %s does not parse: %v", ErrInvalid, contract.HeaderRoutingSlip, err)
	}
	s := Slip{Form: JSONForm, Position: len(w.Done)}
	for i, d := range slices.Concat(w.Done, w.Steps) {
		st := Step{Exchange: d.Exchange, RoutingKey: d.RoutingKey, Name: d.Name}
		if d.CompletedAt != "" {
			t, err := time.Parse(time.RFC3339, d.CompletedAt)
			if err != nil {
				return Slip{}, fmt.Errorf("%w: %s: step %d's completedAt %q is not RFC 3339", ErrInvalid, contract.HeaderRoutingSlip, i+1, d.CompletedAt)
			}
			st.CompletedAt = t.UTC().Truncate(time.Second)
		}
		s.Steps = append(s.Steps, st)
	}
	if err := s.check(); err != nil {
		return Slip{}, err
	}
	return s, nil
}

// fromRoute is the step form read into Envelope.Route, its steps in
// pipeline.
func fromRoute(r acemq.Route, pipeline string) (Slip, error) {
	switch {
	case len(r.Steps) == 0:
		return Slip{}, fmt.Errorf("%w: %s or %s without %s", ErrInvalid, contract.HeaderRouteID, contract.HeaderRoutePosition, contract.HeaderRoute)
	case r.Position < 0 || r.Position > len(r.Steps):
		return Slip{}, fmt.Errorf("%w: %s is not a position in the %d steps %q", ErrInvalid, contract.HeaderRoutePosition,
			len(r.Steps), contract.JoinRoute(r.Steps))
	}
	s := Slip{Form: StepForm, Position: r.Position, ID: r.ID, Steps: make([]Step, len(r.Steps))}
	for i, n := range r.Steps {
		s.Steps[i] = Step{Exchange: pipeline, RoutingKey: n, Name: n}
	}
	if err := s.check(); err != nil {
		return Slip{}, err
	}
	return s, nil
}

// check finds what would make the slip unreadable on the wire.
func (s Slip) check() error {
	if s.Position < 0 || s.Position > len(s.Steps) {
		return fmt.Errorf("%w: position %d is not within its %d steps", ErrInvalid, s.Position, len(s.Steps))
	}
	for i, st := range s.Steps {
		switch {
		case s.Form == StepForm && strings.TrimSpace(st.Name) == "":
			return fmt.Errorf("%w: step %d has no name", ErrInvalid, i+1)
		case s.Form == StepForm && strings.Contains(st.Name, ","):
			return fmt.Errorf("%w: step %d's name %q holds a comma, which %s separates names with", ErrInvalid, i+1, st.Name, contract.HeaderRoute)
		case s.Form == JSONForm && st.Exchange == "" && st.RoutingKey == "":
			return fmt.Errorf("%w: step %d has neither an exchange nor a routing key", ErrInvalid, i+1)
		}
	}
	return nil
}

// Write sets the slip's headers on h, in its form, and removes the other
// form's: the JSON form as one compact JSON text, the step form as the
// route, the position (an integer) and the run id (left out when "").
func (s Slip) Write(h acemq.Table) error {
	if h == nil {
		return errors.New("slip: writing to a nil table")
	}
	if err := s.check(); err != nil {
		return err
	}
	if s.Form == StepForm {
		delete(h, contract.HeaderRoutingSlip)
		h[contract.HeaderRoute] = contract.JoinRoute(s.Names())
		h[contract.HeaderRoutePosition] = int64(s.Position)
		delete(h, contract.HeaderRouteID)
		if s.ID != "" {
			h[contract.HeaderRouteID] = s.ID
		}
		return nil
	}
	text, err := s.jsonText()
	if err != nil {
		return err
	}
	delete(h, contract.HeaderRoute)
	delete(h, contract.HeaderRoutePosition)
	delete(h, contract.HeaderRouteID)
	h[contract.HeaderRoutingSlip] = string(text)
	return nil
}

// jsonText is the slip's JSON form, as the acemq-routing-slip header
// carries it: compact, with nothing escaped that JSON does not require.
func (s Slip) jsonText() ([]byte, error) {
	w := wireSlip{Steps: []wireStep{}}
	for _, st := range s.Remaining() {
		w.Steps = append(w.Steps, wireStep{Exchange: st.Exchange, RoutingKey: st.RoutingKey, Name: st.Name})
	}
	for _, st := range s.Done() {
		d := wireStep{Exchange: st.Exchange, RoutingKey: st.RoutingKey, Name: st.Name}
		if !st.CompletedAt.IsZero() {
			d.CompletedAt = st.CompletedAt.UTC().Format(contract.RoutingSlipCompletedAtLayout)
		}
		w.Done = append(w.Done, d)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func isEmpty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case []byte:
		return len(v) == 0
	}
	return false
}

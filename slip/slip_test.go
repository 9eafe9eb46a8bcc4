package slip_test

import (
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/slip"
	"github.com/acemq-go/acemq/transport"
)

// sectionThirteen is a JSON slip written as CONTRACT.md section 13 shows
// it, one step done and one to come.
const sectionThirteen = `{"steps":[{"exchange":"orders","routingKey":"store","name":"store"}],` +
	`"done":[{"exchange":"orders","routingKey":"validate","name":"validate","completedAt":"2026-09-09T14:03:11Z"}]}`

// read reads the slip of a message with headers h, as a handler's
// envelope has them.
func read(t *testing.T, h transport.Table) (slip.Slip, bool, error) {
	t.Helper()
	return slip.Read(acemq.ReadEnvelope(transport.Message{Headers: h}))
}

func TestJSONFormReadAndWrittenAgain(t *testing.T) {
	s, ok, err := read(t, transport.Table{contract.HeaderRoutingSlip: sectionThirteen})
	if err != nil || !ok {
		t.Fatalf("Read = %v, %v", ok, err)
	}
	want := slip.Slip{Form: slip.JSONForm, Position: 1, Steps: []slip.Step{
		{Exchange: "orders", RoutingKey: "validate", Name: "validate", CompletedAt: time.Date(2026, 9, 9, 14, 3, 11, 0, time.UTC)},
		{Exchange: "orders", RoutingKey: "store", Name: "store"},
	}}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("Read = %#v\nwant   %#v", s, want)
	}
	if cur, ok := s.Current(); !ok || cur.Name != "store" {
		t.Errorf("Current = %+v, %v", cur, ok)
	}
	h := transport.Table{}
	if err := s.Write(h); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(h, transport.Table{contract.HeaderRoutingSlip: sectionThirteen}) {
		t.Errorf("written again:\n%v\nwant\n%s", h[contract.HeaderRoutingSlip], sectionThirteen)
	}

	// Advanced past store, at a time with a fraction and an offset.
	at := time.Date(2026, 9, 9, 16, 4, 5, 987_000_000, time.FixedZone("CEST", 2*3600))
	done := s.Advance(at)
	if !done.Complete() || s.Complete() {
		t.Errorf("Complete: advanced %v, original %v", done.Complete(), s.Complete())
	}
	if err := done.Write(h); err != nil {
		t.Fatal(err)
	}
	const complete = `{"steps":[],"done":[{"exchange":"orders","routingKey":"validate","name":"validate","completedAt":"2026-09-09T14:03:11Z"},` +
		`{"exchange":"orders","routingKey":"store","name":"store","completedAt":"2026-09-09T14:04:05Z"}]}`
	if got := h[contract.HeaderRoutingSlip]; got != complete {
		t.Errorf("advanced:\n%v\nwant\n%s", got, complete)
	}
}

// A new slip leaves done out, and a step's name when it has none; nothing
// is HTML-escaped.
func TestJSONFormNew(t *testing.T) {
	s, err := slip.New(slip.Step{Exchange: "billing", RoutingKey: "charge<eu>"}, slip.Step{RoutingKey: "audit", Name: "audit & log"})
	if err != nil {
		t.Fatal(err)
	}
	h := transport.Table{contract.HeaderRoute: "stale", contract.HeaderRoutePosition: int64(3)}
	if err := s.Write(h); err != nil {
		t.Fatal(err)
	}
	want := transport.Table{contract.HeaderRoutingSlip: `{"steps":[{"exchange":"billing","routingKey":"charge<eu>"},{"exchange":"","routingKey":"audit","name":"audit & log"}]}`}
	if !reflect.DeepEqual(h, want) {
		t.Errorf("written %v\nwant    %v", h, want)
	}
	next := s.Advance(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if cur, _ := next.Current(); cur.Name != "audit & log" || len(next.Done()) != 1 || len(next.Remaining()) != 1 {
		t.Errorf("advanced: current %+v, done %v, remaining %v", cur, next.Done(), next.Remaining())
	}
}

// Another library's JSON (spaces, fractional seconds, an offset, []byte,
// fields this library does not know) is read.
func TestJSONFormFromOthers(t *testing.T) {
	text := []byte(`{"steps": [{"exchange": "orders", "routingKey": "store", "extra": 1}], ` +
		`"done": [{"exchange": "orders", "routingKey": "validate", "completedAt": "2026-09-09T16:03:11.123456+02:00"}], "version": 2}`)
	s, ok, err := read(t, transport.Table{contract.HeaderRoutingSlip: text})
	if err != nil || !ok {
		t.Fatalf("Read = %v, %v", ok, err)
	}
	if got := s.Steps[0].CompletedAt; !got.Equal(time.Date(2026, 9, 9, 14, 3, 11, 0, time.UTC)) {
		t.Errorf("completedAt read as %v", got)
	}
	if cur, _ := s.Current(); cur.RoutingKey != "store" || cur.Name != "" {
		t.Errorf("Current = %+v", cur)
	}
	if got := s.Names(); !reflect.DeepEqual(got, []string{"validate", "store"}) {
		t.Errorf("Names = %q", got)
	}
}

func TestStepFormReadAndAdvanced(t *testing.T) {
	const run = "5f0c6cbe-6a9b-4a8e-9d8e-1f2a3b4c5d6e"
	in := transport.Table{
		contract.HeaderType:          "orders",
		contract.HeaderRoute:         "validate,enrich,store",
		contract.HeaderRoutePosition: int32(1),
		contract.HeaderRouteID:       run,
	}
	s, ok, err := read(t, in)
	if err != nil || !ok {
		t.Fatalf("Read = %v, %v", ok, err)
	}
	want := slip.Slip{Form: slip.StepForm, Position: 1, ID: run, Steps: []slip.Step{
		{Exchange: "orders", RoutingKey: "validate", Name: "validate"},
		{Exchange: "orders", RoutingKey: "enrich", Name: "enrich"},
		{Exchange: "orders", RoutingKey: "store", Name: "store"},
	}}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("Read = %#v\nwant   %#v", s, want)
	}
	next := s.Advance(time.Now())
	if cur, _ := next.Current(); cur != want.Steps[2] {
		t.Errorf("after Advance, Current = %+v", cur)
	}
	h := transport.Table{contract.HeaderRoutingSlip: "stale"}
	if err := next.Write(h); err != nil {
		t.Fatal(err)
	}
	wantHeaders := transport.Table{
		contract.HeaderRoute:         "validate,enrich,store",
		contract.HeaderRoutePosition: int64(2),
		contract.HeaderRouteID:       run,
	}
	if !reflect.DeepEqual(h, wantHeaders) {
		t.Errorf("written %v\nwant    %v", transport.FormatTable(h), transport.FormatTable(wantHeaders))
	}
	if last := next.Advance(time.Now()); !last.Complete() || last.Position != 3 {
		t.Errorf("after the last step: %+v", last)
	}
}

// .NET writes the run id as 32 hex digits: read and kept as it is.
func TestStepFormDotNetRunID(t *testing.T) {
	const run = "5f0c6cbe6a9b4a8e9d8e1f2a3b4c5d6e"
	s, ok, err := read(t, transport.Table{contract.HeaderType: "orders", contract.HeaderRoute: "a,b", contract.HeaderRouteID: run})
	if err != nil || !ok || s.ID != run || s.Position != 0 {
		t.Fatalf("Read = %+v, %v, %v", s, ok, err)
	}
	h := transport.Table{}
	if err := s.Advance(time.Now()).Write(h); err != nil || h[contract.HeaderRouteID] != run {
		t.Errorf("written %v, %v", transport.FormatTable(h), err)
	}
}

// A new step-form run has an id as Java writes it: a UUID with dashes.
func TestNewRoute(t *testing.T) {
	s, err := slip.NewRoute("orders", "validate", "enrich", "store")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(s.ID) {
		t.Errorf("run id %q is not a UUID v4 with dashes", s.ID)
	}
	h := transport.Table{}
	if err := s.Write(h); err != nil {
		t.Fatal(err)
	}
	if h[contract.HeaderRoute] != "validate,enrich,store" || h[contract.HeaderRoutePosition] != int64(0) {
		t.Errorf("written %v", transport.FormatTable(h))
	}
	for _, names := range [][]string{{"a", "b,c"}, {"a", " "}} {
		if _, err := slip.NewRoute("orders", names...); !errors.Is(err, slip.ErrInvalid) {
			t.Errorf("NewRoute(%q) = %v, want ErrInvalid", names, err)
		}
	}
	if _, err := slip.New(slip.Step{Name: "nowhere"}); !errors.Is(err, slip.ErrInvalid) {
		t.Errorf("New with a step that goes nowhere = %v, want ErrInvalid", err)
	}
}

func TestNoSlip(t *testing.T) {
	for _, h := range []transport.Table{nil, {"tenant": "acme"}, {contract.HeaderRoutingSlip: ""}, {contract.HeaderRoute: " "}} {
		if s, ok, err := read(t, h); ok || err != nil {
			t.Errorf("Read of %v = %+v, %v, %v; want none", transport.FormatTable(h), s, ok, err)
		}
	}
}

// A slip that does not parse is an error matching ErrInvalid, which says
// what is wrong.
func TestInvalid(t *testing.T) {
	tests := []struct {
		name string
		h    transport.Table
		says string
	}{
		{"not JSON", transport.Table{contract.HeaderRoutingSlip: "steps: [a]"}, "acemq-routing-slip does not parse"},
		{"JSON of another shape", transport.Table{contract.HeaderRoutingSlip: `{"steps":"a,b"}`}, "does not parse"},
		{"trailing text", transport.Table{contract.HeaderRoutingSlip: sectionThirteen + "x"}, "does not parse"},
		{"not a string", transport.Table{contract.HeaderRoutingSlip: int64(3)}, "not a JSON text"},
		{"a table", transport.Table{contract.HeaderRoutingSlip: transport.Table{"steps": "a"}}, "not a JSON text"},
		{"a step going nowhere", transport.Table{contract.HeaderRoutingSlip: `{"steps":[{"name":"x"}]}`}, "neither an exchange nor a routing key"},
		{"completedAt not RFC 3339", transport.Table{contract.HeaderRoutingSlip: `{"steps":[],"done":[{"exchange":"o","routingKey":"a","completedAt":"09/09/2026"}]}`},
			`completedAt "09/09/2026" is not RFC 3339`},
		{"both forms", transport.Table{contract.HeaderRoutingSlip: sectionThirteen, contract.HeaderRoute: "a,b"}, "both"},
		{"position unreadable", transport.Table{contract.HeaderRoute: "a,b", contract.HeaderRoutePosition: "first"}, "x-acemq-route-position is not a position"},
		{"position negative", transport.Table{contract.HeaderRoute: "a,b", contract.HeaderRoutePosition: int32(-1)}, "is not a position"},
		{"position past the end", transport.Table{contract.HeaderRoute: "a,b", contract.HeaderRoutePosition: int32(3)}, "is not a position"},
		{"id without route", transport.Table{contract.HeaderRouteID: "run-1"}, "without x-acemq-route"},
		{"an empty name", transport.Table{contract.HeaderRoute: "a,,b"}, "step 2 has no name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ok, err := read(t, tt.h)
			if !errors.Is(err, slip.ErrInvalid) || ok {
				t.Fatalf("Read = %v, %v; want ErrInvalid", ok, err)
			}
			if !strings.Contains(err.Error(), tt.says) {
				t.Errorf("the error %q does not say %q", err, tt.says)
			}
		})
	}
}

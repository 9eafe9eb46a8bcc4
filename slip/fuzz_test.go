package slip_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/slip"
	"github.com/acemq-go/acemq/transport"
)

// Whatever header values arrive, Read either refuses them (ErrInvalid) or
// reads a slip that Write puts on the wire again and that reads back the
// same, in the same form.
func FuzzRead(f *testing.F) {
	f.Add(sectionThirteen, "", "", "orders")
	f.Add("", "validate,enrich,store", "1", "orders")
	f.Add(`{"steps":[]}`, "", "", "")
	f.Add("", "a,,b", "-1", "p")
	f.Add(`{"steps":[{"routingKey":"a"}],"done":[{"exchange":"x","routingKey":"y","completedAt":"2026-09-09T14:03:11.5+01:00"}]}`, "", "", "p")
	f.Fuzz(func(t *testing.T, jsonForm, route, position, msgType string) {
		h := transport.Table{contract.HeaderType: msgType}
		for k, v := range map[string]string{contract.HeaderRoutingSlip: jsonForm, contract.HeaderRoute: route, contract.HeaderRoutePosition: position} {
			if v != "" {
				h[k] = v
			}
		}
		s, ok, err := slip.Read(acemq.ReadEnvelope(transport.Message{Headers: h}))
		if err != nil {
			if !errors.Is(err, slip.ErrInvalid) || ok {
				t.Fatalf("Read = %v, %v: an error that is not ErrInvalid", ok, err)
			}
			return
		}
		if !ok {
			return
		}
		out := transport.Table{contract.HeaderType: msgType}
		if err := s.Write(out); err != nil {
			t.Fatalf("Write of a slip read: %v", err)
		}
		again, ok, err := slip.Read(acemq.ReadEnvelope(transport.Message{Headers: out}))
		if err != nil || !ok {
			t.Fatalf("reading again what was written: %v, %v (%v)", ok, err, transport.FormatTable(out))
		}
		if !reflect.DeepEqual(s, again) {
			t.Errorf("read %#v\nagain %#v", s, again)
		}
	})
}

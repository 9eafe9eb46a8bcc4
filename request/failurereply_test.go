package request_test

import (
	"context"
	"errors"
	"testing"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/codec/xml"
	"github.com/acemq-go/acemq/codec/yaml"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/request"
	"github.com/acemq-go/acemq/transport"
)

// A failure reply's body is valid under its content type, so that a
// requester that parses the body before it looks at acemq-error (Ruby's)
// gets the error instead of a parse failure and a timeout: the reply
// codec's encoding of no value (JSON's null, YAML's null), and for a codec
// that has none (XML, bytes, text) JSON's null as application/json, which
// every library of the family reads.
func TestFailureReplyBodyIsValidUnderItsContentType(t *testing.T) {
	eachBroker(t, func(t *testing.T, b broker) {
		replies := b.queue + "-failure-replies"
		declare(t, b.conn, replies, false)
		got := receive(t, b.conn, replies)
		for _, tt := range []struct {
			name     string
			codec    acemq.Codec // nil: by type (JSON)
			wantType string
			wantBody string
		}{
			{"json", nil, contract.ContentTypeJSON, "null"},
			{"yaml", yaml.Codec, contract.ContentTypeYAML, "null\n"},
			{"xml, which has no null", xml.Codec, contract.ContentTypeJSON, "null"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				var opts []request.ServeOption
				if tt.codec != nil {
					opts = append(opts, request.WithCodec(tt.codec))
				}
				q := b.queue + "-" + tt.name[:3]
				declare(t, b.conn, q, true)
				serve(t, broker{conn: b.conn, queue: q}, func(context.Context, acemq.Message[map[string]any]) (Price, error) {
					return Price{}, errors.New("no price list for sku-9")
				}, opts...)
				body, ctype := []byte(`{"sku":"sku-9"}`), contract.ContentTypeJSON
				if tt.codec != nil {
					var err error
					if body, err = tt.codec.Marshal(map[string]any{"sku": "sku-9"}); err != nil {
						t.Fatal(err)
					}
					ctype = tt.codec.ContentType()
				}
				publishRaw(t, b.conn, q, transport.Message{ContentType: ctype, CorrelationID: "c-" + tt.name, ReplyTo: replies, Body: body})
				d := next(t, got)
				if d.Headers[contract.HeaderReplyError] != "no price list for sku-9" {
					t.Errorf("reply headers %v; want %s naming the failure", d.Headers, contract.HeaderReplyError)
				}
				if d.ContentType != tt.wantType || string(d.Body) != tt.wantBody {
					t.Errorf("failure reply %q under %q; want %q under %q", d.Body, d.ContentType, tt.wantBody, tt.wantType)
				}
			})
		}
	})
}

// A requester reads a responder's failure from acemq-error whatever the
// body: empty (the Go peer), null (Ruby, and this library), or anything
// else; and a header present but empty is a failure still, not a reply of
// the zero value.
func TestRequesterReadsEveryFailureForm(t *testing.T) {
	eachBroker(t, func(t *testing.T, b broker) {
		c := client(t, b)
		requests := receive(t, b.conn, b.queue)
		for _, tt := range []struct {
			name, text  string
			contentType string
			body        string
			want        string
		}{
			{"empty body (Go peer)", "price list unavailable", contract.ContentTypeJSON, "", "price list unavailable"},
			{"null body (Ruby)", "price list unavailable", contract.ContentTypeJSON, "null", "price list unavailable"},
			{"no content type", "price list unavailable", "", "", "price list unavailable"},
			{"empty text", "", contract.ContentTypeJSON, "null", ""},
		} {
			go func() {
				d, ok := <-requests
				if !ok {
					return
				}
				_ = d.Ack()
				_, _ = publish(b.conn, d.ReplyTo, transport.Message{CorrelationID: d.CorrelationID, ContentType: tt.contentType,
					Headers: transport.Table{contract.HeaderReplyError: tt.text}, Body: []byte(tt.body)})
			}()
			p, err := request.Do[Quote, Price](t.Context(), c, "", b.queue, Quote{SKU: "sku-9"})
			var re *request.ResponderError
			if !errors.As(err, &re) || re.Message != tt.want {
				t.Errorf("%s: Do = %+v, %v; want the responder's failure %q", tt.name, p, err, tt.want)
			}
		}
	})
}

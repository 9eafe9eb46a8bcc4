// The YAML, TOML and XML codecs end to end: a consumer reads the bodies the
// Java and Go libraries wrote, published by a raw client with the family's
// content types, on memory:// and on RabbitMQ, and parks a body of a
// content type it does not read with a reason naming what it reads.
package codec_test

import (
	"fmt"
	"testing"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/codec/toml"
	"github.com/acemq-go/acemq/codec/xml"
	"github.com/acemq-go/acemq/codec/yaml"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/internal/testing/codectest"
	"github.com/acemq-go/acemq/internal/testing/deliverytest"
	"github.com/acemq-go/acemq/transport"
)

// order is the fixtures' message in every format.
type order struct {
	OrderID    string   `json:"orderId" yaml:"orderId" toml:"orderId" xml:"orderId"`
	Customer   string   `json:"customer" yaml:"customer" toml:"customer" xml:"customer"`
	TotalCents int64    `json:"totalCents" yaml:"totalCents" toml:"totalCents" xml:"totalCents"`
	Currency   string   `json:"currency" yaml:"currency" toml:"currency" xml:"currency"`
	Items      []string `json:"items" yaml:"items" toml:"items" xml:"items"`
}

var want = order{OrderID: "o-1", Customer: "Ana Söderström", TotalCents: 4250, Currency: "EUR", Items: []string{"widget", "gasket"}}

// body is a message a raw client publishes, and what becomes of it.
type body struct {
	id          string
	contentType string
	data        []byte
	reason      string // the parked reason; "" when it is read
}

// samples are the fixtures' bodies in format, sent as the family sends
// them and as the other content types read as format.
func samples(t *testing.T, format string, also ...string) []body {
	var out []body
	for _, s := range codectest.Load(t).Of(t, format) {
		out = append(out, body{id: format + "-" + s.Producer, contentType: s.ContentType, data: s.Body})
		for i, ct := range also {
			out = append(out, body{id: fmt.Sprintf("%s-%s-%d", format, s.Producer, i), contentType: ct, data: s.Body})
		}
	}
	return out
}

func cases(t *testing.T) []struct {
	name   string
	codec  acemq.Codec
	bodies []body
} {
	jsonBody := []byte(`{"orderId":"o-1","customer":"Ana Söderström","totalCents":4250,"currency":"EUR","items":["widget","gasket"]}`)
	yamlBodies := samples(t, "yaml", "text/yaml", "application/x-yaml; charset=utf-8", "Application/VND.Acme.Order+YAML")
	tomlBodies := samples(t, "toml", "text/toml", "application/vnd.acme.order+toml")
	xmlBodies := samples(t, "xml", "text/xml; charset=utf-8", "application/vnd.acme.order+xml")
	all := append(append(append([]body{{id: "json", contentType: contract.ContentTypeJSON, data: jsonBody}}, yamlBodies...), tomlBodies...), xmlBodies...)
	return []struct {
		name   string
		codec  acemq.Codec
		bodies []body
	}{
		{"yaml", yaml.Codec, append(yamlBodies,
			body{id: "json", contentType: contract.ContentTypeJSON, data: jsonBody,
				reason: `could not be decoded: the content type "application/json" is not one the consumer's codec reads (it reads application/yaml, application/x-yaml, text/yaml, text/x-yaml, */*+yaml; not a message without a content type)`},
			body{id: "none", data: yamlBodies[0].data,
				reason: `could not be decoded: the content type "" is not one the consumer's codec reads (it reads application/yaml, application/x-yaml, text/yaml, text/x-yaml, */*+yaml; not a message without a content type)`},
			body{id: "bad", contentType: contract.ContentTypeYAML, data: []byte("orderId: [o-1\n"),
				reason: `could not be decoded: acemq: YAML codec: yaml: line 1: did not find expected ',' or ']'`})},
		{"toml", toml.Codec, append(tomlBodies,
			body{id: "yaml", contentType: contract.ContentTypeYAML, data: yamlBodies[0].data,
				reason: `could not be decoded: the content type "application/yaml" is not one the consumer's codec reads (it reads application/toml, text/toml, */*+toml; not a message without a content type)`})},
		{"xml", xml.Codec, append(xmlBodies,
			body{id: "text", contentType: "text/plain", data: xmlBodies[0].data,
				reason: `could not be decoded: the content type "text/plain" is not one the consumer's codec reads (it reads application/xml, text/xml, */*+xml; not a message without a content type)`},
			body{id: "dtd", contentType: contract.ContentTypeXML, data: []byte(`<!DOCTYPE m [<!ENTITY e SYSTEM "file:///etc/passwd">]><m><orderId>&e;</orderId></m>`),
				reason: `could not be decoded: acemq: XML codec: a DTD (<!DOCTYPE ...> or another <!...> declaration) is refused`})},
		{"all", acemq.Codecs(yaml.Codec, toml.Codec, xml.Codec, acemq.JSON), append(all,
			body{id: "protobuf", contentType: "application/x-protobuf", data: []byte{0x0a, 0x03, 'o', '-', '1'},
				reason: `could not be decoded: the content type "application/x-protobuf" is not one any of its codecs reads (the codecs are application/yaml, application/toml, application/xml, application/json)`},
			body{id: "xml as yaml", contentType: contract.ContentTypeYAML, data: xmlBodies[0].data,
				reason: "could not be decoded: no codec decoded it: application/yaml: acemq: YAML codec: yaml: unmarshal errors:\n  line 1: cannot unmarshal !!str `<OrderP...` into codec_test.order"})},
	}
}

func TestTextFormatsOnMemory(t *testing.T) {
	for _, tc := range cases(t) {
		t.Run(tc.name, func(t *testing.T) {
			check(t, deliverytest.Memory(t, "orders"), "orders", tc.codec, tc.bodies)
		})
	}
}

func TestTextFormatsOnRabbitMQ(t *testing.T) {
	for _, tc := range cases(t) {
		t.Run(tc.name, func(t *testing.T) {
			q := brokertest.UniqueName(t, "acemq.test.codec")
			check(t, deliverytest.RabbitMQ(t, q), q, tc.codec, tc.bodies)
		})
	}
}

// check publishes bodies to q raw, as another library would, and sees each
// read by a consumer with codec as want, or parked with its reason.
func check(t *testing.T, conn *acemq.Conn, q string, codec acemq.Codec, bodies []body) {
	t.Helper()
	msgs := make([]transport.Message, len(bodies))
	parked := 0
	for i, b := range bodies {
		msgs[i] = transport.Message{MessageID: b.id, ContentType: b.contentType, Body: b.data, Persistent: true}
		if b.reason != "" {
			parked++
		}
	}
	out := deliverytest.Deliver[order](t, conn, q, codec, msgs)
	for _, b := range bodies {
		if b.reason == "" {
			if o, ok := out.Accepted[b.id]; !ok || !codectest.Same(t, o, want) {
				t.Errorf("%s (%s): read %+v (%v), want %+v", b.id, b.contentType, o, ok, want)
			}
			continue
		}
		if out.Parked[b.id] != b.reason {
			t.Errorf("%s (%q) parked as\n%q\nwant\n%q", b.id, b.contentType, out.Parked[b.id], b.reason)
		}
		if _, ok := out.Accepted[b.id]; ok {
			t.Errorf("%s reached the handler", b.id)
		}
	}
	if len(out.Parked) != parked || len(out.DeadLettered) != 0 {
		t.Errorf("%d parked messages, %d dead-lettered (%v); want %d parked, none dead-lettered", len(out.Parked), len(out.DeadLettered), out.DeadLettered, parked)
	}
}

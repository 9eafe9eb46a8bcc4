package micro

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"encoding/xml"
	"errors"

	hamba "github.com/hamba/avro/v2"
	gotoml "github.com/pelletier/go-toml/v2"
	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/proto"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/internal/testing/testpb"
)

// rawCodec is a format's library called directly, with no AceMQ codec
// around it: each codec row's nearest raw equivalent, beside it in the
// report ("<name>-raw"). It reads whatever content type it is given.
type rawCodec struct {
	contentType string
	marshal     func(any) ([]byte, error)
	unmarshal   func([]byte, any) error
}

func (c rawCodec) ContentType() string                          { return c.contentType }
func (c rawCodec) Reads(string) bool                            { return true }
func (c rawCodec) Marshal(v any) ([]byte, error)                { return c.marshal(v) }
func (c rawCodec) Unmarshal(_ string, data []byte, v any) error { return c.unmarshal(data, v) }

// rawCases are the raw equivalents of the codec rows, named after them.
func rawCases(codecs map[string]acemq.Codec) ([]codecCase, error) {
	order := func() any { return new(OrderPlaced) }
	avroOrder := func() any { return new(AvroOrderPlaced) }
	schema, err := hamba.Parse(AvroSchema)
	if err != nil {
		return nil, err
	}
	avroMarshal := func(v any) ([]byte, error) { return hamba.Marshal(schema, v) }
	avroUnmarshal := func(data []byte, v any) error { return hamba.Unmarshal(schema, data, v) }
	// The Confluent framing by hand: a zero byte and a schema id (big
	// endian), for an id known beforehand (no registry lookup).
	framed := func(v any) ([]byte, error) {
		body, err := avroMarshal(v)
		if err != nil {
			return nil, err
		}
		return append(binary.BigEndian.AppendUint32([]byte{0}, 1), body...), nil
	}
	unframed := func(data []byte, v any) error {
		if len(data) < 5 || data[0] != 0 {
			return errors.New("not a framed body")
		}
		return avroUnmarshal(data[5:], v)
	}
	// AES-256-GCM over the JSON body, a random nonce before the sealed text.
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	seal := func(v any) ([]byte, error) {
		plain, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
		_, _ = rand.Read(nonce)
		return aead.Seal(nonce, nonce, plain, nil), nil
	}
	open := func(data []byte, v any) error {
		n := aead.NonceSize()
		if len(data) < n {
			return errors.New("too short")
		}
		plain, err := aead.Open(nil, data[:n], data[n:], nil)
		if err != nil {
			return err
		}
		return json.Unmarshal(plain, v)
	}
	protoMarshal := func(v any) ([]byte, error) { return proto.Marshal(v.(proto.Message)) }
	protoUnmarshal := func(data []byte, v any) error {
		p := v.(**testpb.OrderPlaced) // as the codec row's target
		*p = new(testpb.OrderPlaced)
		return proto.Unmarshal(data, *p)
	}
	raw := func(of string, marshal func(any) ([]byte, error), unmarshal func([]byte, any) error) acemq.Codec {
		return rawCodec{contentType: codecs[of].ContentType(), marshal: marshal, unmarshal: unmarshal}
	}
	return []codecCase{
		{name: "json-raw", codec: raw("json", json.Marshal, json.Unmarshal), value: Order, target: order},
		{name: "yaml-raw", codec: raw("yaml", yaml.Marshal, yaml.Unmarshal), value: Order, target: order},
		{name: "toml-raw", codec: raw("toml", gotoml.Marshal, gotoml.Unmarshal), value: Order, target: order},
		{name: "xml-raw", codec: raw("xml", xml.Marshal, xml.Unmarshal), value: Order, target: order},
		{name: "protobuf-raw", codec: raw("protobuf", protoMarshal, protoUnmarshal), value: &testpb.OrderPlaced{OrderId: AvroOrder.OrderID, TotalCents: AvroOrder.TotalCents, Tenant: AvroOrder.Tenant},
			target: func() any { return new(*testpb.OrderPlaced) }},
		{name: "avro-fixed-raw", codec: raw("avro-fixed", avroMarshal, avroUnmarshal), value: AvroOrder, target: avroOrder},
		{name: "avro-registered-raw", codec: raw("avro-registered", framed, unframed), value: AvroOrder, target: avroOrder},
		{name: "encryption-json-raw", codec: raw("encryption-json", seal, open), value: Order, target: order},
	}, nil
}

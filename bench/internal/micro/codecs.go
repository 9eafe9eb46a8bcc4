package micro

import (
	"errors"
	"flag"
	"fmt"
	"reflect"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/claimcheck"
	"github.com/acemq-go/acemq/codec/avro"
	"github.com/acemq-go/acemq/codec/protobuf"
	"github.com/acemq-go/acemq/codec/toml"
	"github.com/acemq-go/acemq/codec/xml"
	"github.com/acemq-go/acemq/codec/yaml"
	"github.com/acemq-go/acemq/encryption"
	"github.com/acemq-go/acemq/internal/testing/testpb"
	"github.com/acemq-go/acemq/schemaregistry"
)

// CodecsPackage is the Package of the codec benchmarks' results: they run in
// this process (testing.Benchmark), not under go test in the acemq module.
const CodecsPackage = "codecs"

// OrderPlaced is the order of codec-interop.json's YAML, TOML and XML
// samples (the family's fixtures). Its type name is the XML root element's,
// as the Java reference and the Go peer write it.
type OrderPlaced struct {
	OrderID    string   `json:"orderId" yaml:"orderId" toml:"orderId" xml:"orderId"`
	Customer   string   `json:"customer" yaml:"customer" toml:"customer" xml:"customer"`
	TotalCents int64    `json:"totalCents" yaml:"totalCents" toml:"totalCents" xml:"totalCents"`
	Currency   string   `json:"currency" yaml:"currency" toml:"currency" xml:"currency"`
	Items      []string `json:"items" yaml:"items" toml:"items" xml:"items"`
}

// Order is the message the text formats' rows encode and decode.
var Order = OrderPlaced{OrderID: "o-1", Customer: "Ana Söderström", TotalCents: 4250, Currency: "EUR", Items: []string{"widget", "gasket"}}

// AvroOrderPlaced is the OrderPlaced of the fixtures' Avro samples.
type AvroOrderPlaced struct {
	OrderID    string `avro:"orderId"`
	TotalCents int64  `avro:"totalCents"`
	Tenant     string `avro:"tenant"`
}

// AvroSchema is codec-interop.json's avro_schema.
const AvroSchema = `{"type":"record","name":"OrderPlaced","namespace":"org.acemq.test","fields":[{"name":"orderId","type":"string"},{"name":"totalCents","type":"long"},{"name":"tenant","type":"string"}]}`

// AvroOrder is the message of the Avro rows, and (as acemq.test.OrderPlaced)
// of the protobuf row.
var AvroOrder = AvroOrderPlaced{OrderID: "o-1", TotalCents: 4250, Tenant: "acme"}

// codecCase is one format's pair of benchmarks: Marshal of value, and
// Unmarshal of that body with the codec's content type into what target
// returns (a new value each time, as a consumer decodes each delivery into
// a new one).
type codecCase struct {
	name   string
	codec  acemq.Codec
	value  any
	target func() any
	// body, when set, is what Unmarshal reads instead of Marshal's output,
	// under contentType (the composite reads a TOML body).
	body        func() ([]byte, error)
	contentType string
}

// CodecNames are the formats RunCodecs measures, in its order; each gives
// the rows BenchmarkCodec/<name>/marshal and BenchmarkCodec/<name>/unmarshal.
func CodecNames() ([]string, error) {
	cases, err := codecCases()
	if err != nil {
		return nil, err
	}
	names := make([]string, len(cases))
	for i, c := range cases {
		names[i] = c.name
	}
	return names, nil
}

func codecCases() ([]codecCase, error) {
	order := func() any { return new(OrderPlaced) }
	avroOrder := func() any { return new(AvroOrderPlaced) }

	fixed, err := avro.Fixed(AvroSchema)
	if err != nil {
		return nil, err
	}
	registered, err := avro.Registered(AvroSchema, &schemaregistry.Memory{})
	if err != nil {
		return nil, err
	}
	keyring, err := encryption.NewKeyring("bench", encryption.GenerateKey())
	if err != nil {
		return nil, err
	}
	encrypted, err := encryption.NewCodec(keyring, acemq.JSON)
	if err != nil {
		return nil, err
	}
	inline, err := claimcheck.New(acemq.JSON, &claimcheck.Memory{})
	if err != nil {
		return nil, err
	}
	desc, err := OrderPlacedDescriptor()
	if err != nil {
		return nil, err
	}
	pb := dynamicpb.NewMessage(desc)
	pb.Set(desc.Fields().ByName("order_id"), protoreflect.ValueOfString(AvroOrder.OrderID))
	pb.Set(desc.Fields().ByName("total_cents"), protoreflect.ValueOfInt64(AvroOrder.TotalCents))
	pb.Set(desc.Fields().ByName("tenant"), protoreflect.ValueOfString(AvroOrder.Tenant))

	cases := []codecCase{
		{name: "json", codec: acemq.JSON, value: Order, target: order},
		{name: "yaml", codec: yaml.Codec, value: Order, target: order},
		{name: "toml", codec: toml.Codec, value: Order, target: order},
		{name: "xml", codec: xml.Codec, value: Order, target: order},
		// A typed consumer of *testpb.OrderPlaced decodes into a nil
		// *testpb.OrderPlaced, which the codec allocates.
		{name: "protobuf", codec: protobuf.Codec, value: &testpb.OrderPlaced{OrderId: AvroOrder.OrderID, TotalCents: AvroOrder.TotalCents, Tenant: AvroOrder.Tenant},
			target: func() any { return new(*testpb.OrderPlaced) }},
		{name: "protobuf-dynamicpb", codec: protobuf.Codec, value: pb, target: func() any { return dynamicpb.NewMessage(desc) }},
		{name: "avro-fixed", codec: fixed, value: AvroOrder, target: avroOrder},
		{name: "avro-registered", codec: registered, value: AvroOrder, target: avroOrder},
		{name: "encryption-json", codec: encrypted, value: Order, target: order},
		{name: "claimcheck-json-inline", codec: inline, value: Order, target: order},
		{name: "codecs-yaml-toml-xml-json", codec: acemq.Codecs(yaml.Codec, toml.Codec, xml.Codec, acemq.JSON), value: Order, target: order,
			body: func() ([]byte, error) { return toml.Codec.Marshal(Order) }, contentType: toml.Codec.ContentType()},
	}
	byName := map[string]acemq.Codec{}
	for _, c := range cases {
		byName[c.name] = c.codec
	}
	raws, err := rawCases(byName)
	if err != nil {
		return nil, err
	}
	// Each raw row right after the codec row it goes with.
	var all []codecCase
	for _, c := range cases {
		all = append(all, c)
		for _, r := range raws {
			if r.name == c.name+"-raw" {
				all = append(all, r)
			}
		}
	}
	return all, nil
}

// OrderPlacedDescriptor is acemq.test.OrderPlaced (codec-interop.json's
// proto_schema), the generated message's, for dynamicpb.
func OrderPlacedDescriptor() (protoreflect.MessageDescriptor, error) {
	return (&testpb.OrderPlaced{}).ProtoReflect().Descriptor(), nil
}

// prepare encodes c's value, and decodes the body Unmarshal will read,
// checking that it gives c's value back: a row must not time an error.
func (c codecCase) prepare() (encoded, body []byte, contentType string, err error) {
	if encoded, err = c.codec.Marshal(c.value); err != nil {
		return nil, nil, "", fmt.Errorf("%s: Marshal: %w", c.name, err)
	}
	body, contentType = encoded, c.codec.ContentType()
	if c.body != nil {
		if body, err = c.body(); err != nil {
			return nil, nil, "", fmt.Errorf("%s: the body: %w", c.name, err)
		}
		contentType = c.contentType
	}
	got := c.target()
	if err := c.codec.Unmarshal(contentType, body, got); err != nil {
		return nil, nil, "", fmt.Errorf("%s: Unmarshal(%q): %w", c.name, contentType, err)
	}
	if !same(got, c.value) {
		return nil, nil, "", fmt.Errorf("%s: Unmarshal(%q) gave %v, want %v", c.name, contentType, got, c.value)
	}
	return encoded, body, contentType, nil
}

// same says whether decoded (what a target returned, filled) holds want.
func same(decoded, want any) bool {
	if m, ok := want.(proto.Message); ok {
		if p, ok := decoded.(**testpb.OrderPlaced); ok {
			decoded = *p
		}
		d, ok := decoded.(proto.Message)
		return ok && proto.Equal(d, m)
	}
	return reflect.DeepEqual(reflect.ValueOf(decoded).Elem().Interface(), want)
}

// RunCodecs times Marshal and Unmarshal of one message in each of the
// formats (CodecNames) with testing.Benchmark in this process, for
// benchtime as go test's -benchtime takes it ("1s", "2000x"). Each result's
// ContentType is the body's, and BodyBytes its length.
func RunCodecs(benchtime string) ([]Result, error) {
	restore, err := setBenchtime(benchtime)
	if err != nil {
		return nil, err
	}
	defer restore()
	cases, err := codecCases()
	if err != nil {
		return nil, err
	}
	var results []Result
	for _, c := range cases {
		encoded, body, contentType, err := c.prepare()
		if err != nil {
			return nil, err
		}
		marshal, err := bench(func() error {
			_, err := c.codec.Marshal(c.value)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("%s: Marshal: %w", c.name, err)
		}
		unmarshal, err := bench(func() error { return c.codec.Unmarshal(contentType, body, c.target()) })
		if err != nil {
			return nil, fmt.Errorf("%s: Unmarshal: %w", c.name, err)
		}
		results = append(results,
			result("BenchmarkCodec/"+c.name+"/marshal", marshal, c.codec.ContentType(), encoded),
			result("BenchmarkCodec/"+c.name+"/unmarshal", unmarshal, contentType, body))
	}
	return results, nil
}

// bench runs op under testing.Benchmark, stopping at its first error.
func bench(op func() error) (testing.BenchmarkResult, error) {
	var failed error
	r := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := op(); err != nil {
				failed = err
				b.FailNow()
			}
		}
	})
	if failed == nil && r.N == 0 {
		failed = errors.New("testing.Benchmark ran nothing")
	}
	return r, failed
}

// result is a row of r; NsPerOp keeps its fraction, as go test prints it.
func result(name string, r testing.BenchmarkResult, contentType string, body []byte) Result {
	return Result{Package: CodecsPackage, Name: name, Iterations: int64(r.N), NsPerOp: float64(r.T.Nanoseconds()) / float64(r.N),
		BytesPerOp: r.AllocedBytesPerOp(), AllocsPerOp: r.AllocsPerOp(), ContentType: contentType, BodyBytes: len(body)}
}

// setBenchtime sets testing.Benchmark's benchtime, which only the
// test.benchtime flag sets (testing.Init registers it outside go test), and
// returns what puts the previous value back.
func setBenchtime(benchtime string) (restore func(), err error) {
	testing.Init()
	f := flag.Lookup("test.benchtime")
	if f == nil {
		return nil, errors.New("testing.Init registered no test.benchtime flag")
	}
	old := f.Value.String()
	if err := f.Value.Set(benchtime); err != nil {
		return nil, fmt.Errorf("benchtime %q: %w", benchtime, err)
	}
	return func() { _ = f.Value.Set(old) }, nil
}

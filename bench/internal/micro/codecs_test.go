package micro

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/codec/avro"
	"github.com/acemq-go/acemq/codec/protobuf"
	"github.com/acemq-go/acemq/codec/toml"
	"github.com/acemq-go/acemq/codec/xml"
	"github.com/acemq-go/acemq/codec/yaml"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/testing/testpb"
)

// RunCodecs gives a marshal and an unmarshal row per format, in order, each
// with its body's content type and size. Durations are not asserted.
func TestRunCodecs(t *testing.T) {
	names, err := CodecNames()
	if err != nil {
		t.Fatal(err)
	}
	before := flag.Lookup("test.benchtime").Value.String()
	got, err := RunCodecs("3x")
	if err != nil {
		t.Fatal(err)
	}
	if after := flag.Lookup("test.benchtime").Value.String(); after != before {
		t.Errorf("test.benchtime is %q after RunCodecs, want %q back", after, before)
	}
	if len(got) != 2*len(names) {
		t.Fatalf("%d rows for %d formats, want 2 each: %+v", len(got), len(names), got)
	}
	for i, name := range names {
		for j, op := range []string{"marshal", "unmarshal"} {
			r := got[2*i+j]
			if want := "BenchmarkCodec/" + name + "/" + op; r.Name != want {
				t.Errorf("row %d is %q, want %q", 2*i+j, r.Name, want)
			}
			if r.Package != CodecsPackage || r.Iterations != 3 || r.ContentType == "" || r.BodyBytes == 0 {
				t.Errorf("%s: %+v, want package %q, 3 iterations, a content type and a body size", r.Name, r, CodecsPackage)
			}
		}
	}
	// The composite writes YAML (its first codec's) and reads a TOML body.
	byName := map[string]Result{}
	for _, r := range got {
		byName[r.Name] = r
	}
	if r := byName["BenchmarkCodec/codecs-yaml-toml-xml-json/marshal"]; r.ContentType != yaml.Codec.ContentType() {
		t.Errorf("the composite's marshal row: content type %q, want %q", r.ContentType, yaml.Codec.ContentType())
	}
	if r := byName["BenchmarkCodec/codecs-yaml-toml-xml-json/unmarshal"]; r.ContentType != toml.Codec.ContentType() || r.BodyBytes != byName["BenchmarkCodec/toml/unmarshal"].BodyBytes {
		t.Errorf("the composite's unmarshal row: %+v, want the TOML row's body", r)
	}
}

func TestRunCodecsRefusesABadBenchtime(t *testing.T) {
	before := flag.Lookup("test.benchtime").Value.String()
	if _, err := RunCodecs("soon"); err == nil {
		t.Fatal("RunCodecs(\"soon\") = nil error, want a refusal")
	}
	if after := flag.Lookup("test.benchtime").Value.String(); after != before {
		t.Errorf("test.benchtime is %q after a refused benchtime, want %q", after, before)
	}
}

// A row that would time a failure is refused before it is timed.
func TestPrepareRefusesADecodeThatDiffers(t *testing.T) {
	c := codecCase{name: "lossy", codec: acemq.JSON, value: Order, target: func() any { return new(struct{ OrderID string }) }}
	if _, _, _, err := c.prepare(); err == nil {
		t.Fatal("prepare of a decode that drops fields = nil error")
	}
}

type fixture struct {
	AvroSchema string `json:"avro_schema"`
	Samples    []struct {
		Format      string `json:"format"`
		Producer    string `json:"producer"`
		ContentType string `json:"content_type"`
		Body        []byte `json:"body_base64"`
	} `json:"samples"`
}

// The rows' messages are the fixtures': every Java and Go sample decodes to
// them, and the protobuf and Avro encodings are the Go samples' bytes.
func TestMessagesAreTheFixtures(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "fixtures", "codec-interop.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f fixture
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	if f.AvroSchema != AvroSchema {
		t.Errorf("AvroSchema is not the fixture's avro_schema:\n%s\n%s", AvroSchema, f.AvroSchema)
	}
	fixed, err := avro.Fixed(AvroSchema)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := OrderPlacedDescriptor()
	if err != nil {
		t.Fatal(err)
	}
	generated := &testpb.OrderPlaced{OrderId: AvroOrder.OrderID, TotalCents: AvroOrder.TotalCents, Tenant: AvroOrder.Tenant}
	texts := map[string]acemq.Codec{"yaml": yaml.Codec, "toml": toml.Codec, "xml": xml.Codec}
	seen := 0
	for _, s := range f.Samples {
		what := s.Producer + " " + s.Format
		switch {
		case texts[s.Format] != nil:
			var got OrderPlaced
			if err := texts[s.Format].Unmarshal(s.ContentType, s.Body, &got); err != nil {
				t.Errorf("%s: %v", what, err)
			} else if !same(&got, Order) {
				t.Errorf("%s decodes to %+v, want Order %+v", what, got, Order)
			}
		case s.Format == "avro":
			var got AvroOrderPlaced
			if err := fixed.Unmarshal(s.ContentType, s.Body, &got); err != nil || got != AvroOrder {
				t.Errorf("%s decodes to %+v (%v), want AvroOrder %+v", what, got, err, AvroOrder)
			}
			if body, err := fixed.Marshal(AvroOrder); err != nil || !bytes.Equal(body, s.Body) {
				t.Errorf("%s: AvroOrder encodes to %x (%v), want the sample's %x", what, body, err, s.Body)
			}
		case s.Format == "protobuf":
			dynamic := dynamicpb.NewMessage(desc)
			if err := protobuf.Codec.Unmarshal(s.ContentType, s.Body, dynamic); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if body, err := protobuf.Codec.Marshal(generated); err != nil || !bytes.Equal(body, s.Body) {
				t.Errorf("%s: the generated message encodes to %x (%v), want the sample's %x", what, body, err, s.Body)
			}
			if body, err := protobuf.Codec.Marshal(dynamic); err != nil || !bytes.Equal(body, s.Body) {
				t.Errorf("%s: the dynamic message encodes to %x (%v), want the sample's %x", what, body, err, s.Body)
			}
			var got *testpb.OrderPlaced
			if err := protobuf.Codec.Unmarshal(s.ContentType, s.Body, &got); err != nil || !proto.Equal(got, generated) {
				t.Errorf("%s decodes to %v (%v), want %v", what, got, err, generated)
			}
		default:
			continue // avro-registered: its id is the fixture's registry's
		}
		seen++
	}
	if seen != 9 {
		t.Errorf("checked %d samples, want the 9 YAML, TOML, XML, Avro and protobuf ones", seen)
	}
}

// The claim-check row is the inline framing around JSON's body: the store
// is never called, so the row is the framing's cost alone.
func TestClaimCheckRowIsInline(t *testing.T) {
	cases, err := codecCases()
	if err != nil {
		t.Fatal(err)
	}
	plain, err := acemq.JSON.Marshal(Order)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]byte{contract.ClaimCheckMagic, contract.ClaimCheckVersion, contract.ClaimCheckInline}, plain...)
	for _, c := range cases {
		if c.name != "claimcheck-json-inline" {
			continue
		}
		got, err := c.codec.Marshal(c.value)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("the claim-check body is %x (%v), want %x", got, err, want)
		}
		return
	}
	t.Fatal("no claimcheck-json-inline case")
}

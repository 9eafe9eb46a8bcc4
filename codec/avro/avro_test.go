package avro_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/codec/avro"
	"github.com/acemq-go/acemq/internal/testing/codectest"
	"github.com/acemq-go/acemq/schemaregistry"
)

// orderPlaced is the fixture's record, org.acemq.test.OrderPlaced.
type orderPlaced struct {
	OrderID    string `avro:"orderId" json:"orderId"`
	TotalCents int64  `avro:"totalCents" json:"totalCents"`
	Tenant     string `avro:"tenant" json:"tenant"`
}

func expected(t *testing.T, s codectest.Sample) orderPlaced {
	t.Helper()
	var want orderPlaced
	if err := json.Unmarshal(s.Expected, &want); err != nil {
		t.Fatal(err)
	}
	return want
}

// fixtureID is the schema id the registered samples carry.
const fixtureID = 7

// registry is a test Registry: the fixture's schema is id 7, others may be
// added, and the ids in down fail as a registry out of reach does.
type registry struct {
	mu      sync.Mutex
	schemas map[uint32]string
	down    map[uint32]bool
	offline bool // every call fails
	calls   int
}

func newRegistry(f codectest.Fixtures) *registry {
	return &registry{schemas: map[uint32]string{fixtureID: f.AvroSchema}, down: map[uint32]bool{}}
}

var errOffline = errors.New("dial tcp 10.0.0.9:8081: connect: connection refused")

func (r *registry) Register(_ context.Context, def string) (uint32, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.offline {
		return 0, errOffline
	}
	for id, d := range r.schemas {
		if d == def {
			return id, nil
		}
	}
	id := uint32(100 + len(r.schemas))
	r.schemas[id] = def
	return id, nil
}

func (r *registry) Schema(_ context.Context, id uint32) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.offline || r.down[id] {
		return "", errOffline
	}
	def, ok := r.schemas[id]
	if !ok {
		return "", schemaregistry.Unknown(id)
	}
	return def, nil
}

func fixed(t testing.TB, schema string) *avro.FixedCodec {
	t.Helper()
	c, err := avro.Fixed(schema)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func registered(t testing.TB, schema string, reg schemaregistry.Registry) *avro.RegisteredCodec {
	t.Helper()
	c, err := avro.Registered(schema, reg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Every fixed-schema sample (Java's and Go's, byte-identical) decodes to its
// value, as a struct and as a map, and the codec writes the same bytes.
func TestFixedFixtures(t *testing.T) {
	f := codectest.Load(t)
	c := fixed(t, f.AvroSchema)
	for _, s := range f.Of(t, "avro") {
		t.Run(s.Producer, func(t *testing.T) {
			want := expected(t, s)
			if !c.Reads(s.ContentType) {
				t.Fatalf("the codec does not read the sample's %q", s.ContentType)
			}
			var got orderPlaced
			if err := c.Unmarshal(s.ContentType, s.Body, &got); err != nil || got != want {
				t.Errorf("decoded %+v, %v; want %+v", got, err, want)
			}
			var m map[string]any
			if err := c.Unmarshal(s.ContentType, s.Body, &m); err != nil || m["tenant"] != want.Tenant || m["totalCents"] != want.TotalCents {
				t.Errorf("decoded into a map: %v, %v; want %+v", m, err, want)
			}
			body, err := c.Marshal(want)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(body, s.Body) {
				t.Errorf("Marshal wrote %x, the %s library %x", body, s.Producer, s.Body)
			}
		})
	}
}

// Every registered sample (id 7) decodes to its value through the registry,
// and the codec, registering the schema as id 7, writes the same bytes.
func TestRegisteredFixtures(t *testing.T) {
	f := codectest.Load(t)
	for _, s := range f.Of(t, "avro-registered") {
		t.Run(s.Producer, func(t *testing.T) {
			c := registered(t, f.AvroSchema, newRegistry(f))
			want := expected(t, s)
			if !c.Reads(s.ContentType) {
				t.Fatalf("the codec does not read the sample's %q", s.ContentType)
			}
			var got orderPlaced
			if err := c.Unmarshal(s.ContentType, s.Body, &got); err != nil || got != want {
				t.Errorf("decoded %+v, %v; want %+v", got, err, want)
			}
			body, err := c.Marshal(want)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(body, s.Body) {
				t.Errorf("Marshal wrote %x, the %s library %x", body, s.Producer, s.Body)
			}
		})
	}
}

// The registered codec registers once, and looks an id up once.
func TestRegisteredAsksOnce(t *testing.T) {
	f := codectest.Load(t)
	reg := newRegistry(f)
	c := registered(t, f.AvroSchema, reg)
	body := f.Of(t, "avro-registered")[0].Body
	for range 3 {
		if _, err := c.Marshal(orderPlaced{OrderID: "o"}); err != nil {
			t.Fatal(err)
		}
		var v orderPlaced
		if err := c.Unmarshal("application/vnd.acemq.avro", body, &v); err != nil {
			t.Fatal(err)
		}
	}
	if reg.calls != 2 {
		t.Errorf("%d registry calls for 3 writes and 3 reads, want 2", reg.calls)
	}
}

// The writer's schema is resolved to the reader's, as Avro does: a field
// the writer has and the reader not is skipped, whatever its place; one the
// reader has with a default and the writer not takes the default; an int
// is promoted to a long. A reader field without a default that the writer
// lacks does not resolve.
func TestRegisteredResolvesTheWritersSchema(t *testing.T) {
	f := codectest.Load(t)
	reg := newRegistry(f)
	const v2 = `{"type":"record","name":"OrderPlaced","namespace":"org.acemq.test","fields":[` +
		`{"name":"currency","type":"string"},{"name":"orderId","type":"string"},{"name":"totalCents","type":"int"},{"name":"tenant","type":"string"}]}`
	writer := registered(t, v2, reg)
	body, err := writer.Marshal(map[string]any{"currency": "EUR", "orderId": "o-2", "totalCents": 99, "tenant": "acme"})
	if err != nil {
		t.Fatal(err)
	}
	var got orderPlaced
	if err := registered(t, f.AvroSchema, reg).Unmarshal("application/vnd.acemq.avro", body, &got); err != nil {
		t.Fatal(err)
	}
	if want := (orderPlaced{OrderID: "o-2", TotalCents: 99, Tenant: "acme"}); got != want {
		t.Errorf("read a v2 body as %+v, want %+v", got, want)
	}

	const withDefault = `{"type":"record","name":"OrderPlaced","namespace":"org.acemq.test","fields":[` +
		`{"name":"orderId","type":"string"},{"name":"totalCents","type":"long"},{"name":"tenant","type":"string"},{"name":"currency","type":"string","default":"EUR"}]}`
	var m map[string]any
	sample := f.Of(t, "avro-registered")[0].Body
	if err := registered(t, withDefault, reg).Unmarshal("application/vnd.acemq.avro", sample, &m); err != nil {
		t.Fatal(err)
	}
	if m["currency"] != "EUR" || m["orderId"] != "o-1" {
		t.Errorf("read the sample with a defaulted field as %v, want currency EUR and orderId o-1", m)
	}

	const required = `{"type":"record","name":"OrderPlaced","namespace":"org.acemq.test","fields":[` +
		`{"name":"orderId","type":"string"},{"name":"region","type":"string"}]}`
	err = registered(t, required, reg).Unmarshal("application/vnd.acemq.avro", sample, &m)
	if !errors.Is(err, avro.ErrIncompatible) || !strings.Contains(err.Error(), "schema id 7") || acemq.IsTemporary(err) {
		t.Errorf("read with a required field the writer lacks: %v, want ErrIncompatible naming schema id 7, not temporary", err)
	}
}

// Each way a registered body can be wrong is an error of its own.
func TestRegisteredErrors(t *testing.T) {
	f := codectest.Load(t)
	reg := newRegistry(f)
	reg.down[8] = true
	c := registered(t, f.AvroSchema, reg)
	sample := f.Of(t, "avro-registered")[0].Body
	withID := func(id byte) []byte { b := bytes.Clone(sample); b[4] = id; return b }
	for _, tc := range []struct {
		name      string
		body      []byte
		is        error
		text      string
		temporary bool
	}{
		{"empty", nil, avro.ErrTruncated, "empty", false},
		{"a bare Avro body", f.Of(t, "avro")[0].Body, avro.ErrNotFramed, "0x06", false},
		{"another magic byte", append([]byte{0x01}, sample[1:]...), avro.ErrNotFramed, "0x01", false},
		{"a short header", sample[:4], avro.ErrTruncated, "4 bytes", false},
		{"a short body", sample[:len(sample)-1], avro.ErrTruncated, "schema id 7", false},
		{"bytes after the value", append(bytes.Clone(sample), 0), avro.ErrTrailingBytes, "schema id 7", false},
		{"an unknown id", withID(9), schemaregistry.ErrUnknownSchema, "schema id 9", false},
		{"the registry out of reach", withID(8), avro.ErrRegistryUnreachable, "schema id 8: " + errOffline.Error(), true},
	} {
		var v orderPlaced
		err := c.Unmarshal("application/vnd.acemq.avro", tc.body, &v)
		if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.text) || acemq.IsTemporary(err) != tc.temporary {
			t.Errorf("%s: %v; want an error matching %v containing %q, temporary %v", tc.name, err, tc.is, tc.text, tc.temporary)
		}
	}
}

// A write while the registry is out of reach fails, naming it, and the
// next write registers.
func TestRegisteredWriteRetriesTheRegistry(t *testing.T) {
	f := codectest.Load(t)
	reg := newRegistry(f)
	reg.offline = true
	c := registered(t, f.AvroSchema, reg)
	if _, err := c.Marshal(orderPlaced{}); !errors.Is(err, avro.ErrRegistryUnreachable) || !errors.Is(err, errOffline) {
		t.Errorf("Marshal with the registry offline: %v, want ErrRegistryUnreachable and the cause", err)
	}
	reg.offline = false
	if body, err := c.Marshal(orderPlaced{}); err != nil || !bytes.Equal(body[:5], []byte{0, 0, 0, 0, fixtureID}) {
		t.Errorf("Marshal with the registry back: %x, %v; want the framing of id 7", body, err)
	}
}

func TestFixedErrors(t *testing.T) {
	f := codectest.Load(t)
	c := fixed(t, f.AvroSchema)
	body := f.Of(t, "avro")[0].Body
	var v orderPlaced
	for _, tc := range []struct {
		name string
		body []byte
		is   error
	}{
		{"empty", nil, avro.ErrTruncated},
		{"a short body", body[:len(body)-1], avro.ErrTruncated},
		{"bytes after the value", append(bytes.Clone(body), 0), avro.ErrTrailingBytes},
		// Never guessed to be framed: the registered sample is read as
		// Avro of the schema (three empty or zero fields), which leaves bytes.
		{"a registered body", f.Of(t, "avro-registered")[0].Body, avro.ErrTrailingBytes},
	} {
		if err := c.Unmarshal("application/avro", tc.body, &v); !errors.Is(err, tc.is) || !strings.Contains(err.Error(), "org.acemq.test.OrderPlaced") {
			t.Errorf("%s: %v, want %v naming the schema", tc.name, err, tc.is)
		}
	}
	if _, err := avro.Fixed(`{"type":"record"}`); err == nil {
		t.Error("Fixed accepted a schema without a name or fields")
	}
	if _, err := avro.Registered(f.AvroSchema, nil); err == nil {
		t.Error("Registered accepted a nil registry")
	}
	if _, err := c.Marshal("a string"); err == nil {
		t.Error("Marshal of a string as a record succeeded")
	}
}

func TestReads(t *testing.T) {
	f := codectest.Load(t)
	fx, rg := fixed(t, f.AvroSchema), registered(t, f.AvroSchema, newRegistry(f))
	for _, tc := range []struct {
		ct              string
		fixed, register bool
	}{
		{"avro/binary", true, false},
		{"Avro/Binary; charset=x", true, false},
		{"avro/x-custom", true, false},
		{"application/avro", true, true},
		{"application/vnd.acme.order+avro", true, true},
		{"application/+avro", false, false},
		{"application/vnd.acemq.avro", false, true},
		{"application/vnd.acemq.avro; v=1", false, true},
		{"", false, false},
		{"application/octet-stream", false, false},
		{"application/x-protobuf", false, false},
		{"not a type", false, false},
	} {
		if got := fx.Reads(tc.ct); got != tc.fixed {
			t.Errorf("fixed Reads(%q) = %v", tc.ct, got)
		}
		if got := rg.Reads(tc.ct); got != tc.register {
			t.Errorf("registered Reads(%q) = %v", tc.ct, got)
		}
	}
	if fx.ContentType() != "avro/binary" || rg.ContentType() != "application/vnd.acemq.avro" {
		t.Errorf("content types %q and %q", fx.ContentType(), rg.ContentType())
	}
}

// A consumer of both, registered first as the package says, reads a framed
// and a bare body sent under the type both read.
func TestBothUnderApplicationAvro(t *testing.T) {
	f := codectest.Load(t)
	both := acemq.Codecs(registered(t, f.AvroSchema, newRegistry(f)), fixed(t, f.AvroSchema))
	for _, format := range []string{"avro", "avro-registered"} {
		s := f.Of(t, format)[0]
		var got orderPlaced
		if err := both.Unmarshal("application/avro", s.Body, &got); err != nil || got != expected(t, s) {
			t.Errorf("%s as application/avro: %+v, %v", format, got, err)
		}
	}
}

// ExampleRegistered: a service's codec of its schema through a registry.
func ExampleRegistered() {
	const schema = `{"type":"record","name":"OrderPlaced","namespace":"org.acemq.test","fields":[` +
		`{"name":"orderId","type":"string"},{"name":"totalCents","type":"long"},{"name":"tenant","type":"string"}]}`
	codec, err := avro.Registered(schema, &schemaregistry.Memory{})
	if err != nil {
		panic(err)
	}
	body, _ := codec.Marshal(orderPlaced{OrderID: "o-1", TotalCents: 4250, Tenant: "acme"})
	var back orderPlaced
	err = codec.Unmarshal(codec.ContentType(), body, &back)
	fmt.Printf("% x\n%+v %v\n", body, back, err)
	// Output:
	// 00 00 00 00 01 06 6f 2d 31 b4 42 08 61 63 6d 65
	// {OrderID:o-1 TotalCents:4250 Tenant:acme} <nil>
}

// FuzzFixedUnmarshal: any body either fails to decode or is exactly one
// value of the schema, which the codec writes back as the same bytes (the
// binary encoding of a record of strings and a long is canonical, but for
// a varint's overlong forms, which hamba reads as the short ones).
func FuzzFixedUnmarshal(f *testing.F) {
	f.Add([]byte("\x06o-1\xb4\x42\x08acme"))
	c := fixed(f, codectest.Load(f).AvroSchema)
	f.Fuzz(func(t *testing.T, body []byte) {
		var v orderPlaced
		if err := c.Unmarshal("avro/binary", body, &v); err != nil {
			return
		}
		again, err := c.Marshal(v)
		if err != nil {
			t.Fatalf("Marshal of a decoded %+v: %v", v, err)
		}
		var back orderPlaced
		if err := c.Unmarshal("avro/binary", again, &back); err != nil || back != v {
			t.Fatalf("%x decoded to %+v, wrote %x, read back %+v (%v)", body, v, again, back, err)
		}
	})
}

// FuzzRegisteredUnmarshal: any body fails with one of the codec's errors
// or decodes through the registry's schema 7; it never panics.
func FuzzRegisteredUnmarshal(f *testing.F) {
	f.Add([]byte("\x00\x00\x00\x00\x07\x06o-1\xb4\x42\x08acme"))
	fx := codectest.Load(f)
	reg := newRegistry(fx)
	reg.down[8] = true
	c := registered(f, fx.AvroSchema, reg)
	f.Fuzz(func(t *testing.T, body []byte) {
		var v orderPlaced
		err := c.Unmarshal("application/vnd.acemq.avro", body, &v)
		if err == nil {
			if len(body) < 5 || body[4] != fixtureID {
				t.Fatalf("%x decoded without schema id 7", body)
			}
			return
		}
		for _, known := range []error{avro.ErrNotFramed, avro.ErrTruncated, avro.ErrTrailingBytes, avro.ErrRegistryUnreachable, schemaregistry.ErrUnknownSchema} {
			if errors.Is(err, known) {
				return
			}
		}
		// Otherwise hamba refused the value itself (a negative length, a
		// string over its limit): it names the schema id.
		if !strings.Contains(err.Error(), "schema id 7") {
			t.Fatalf("%x: %v, an error of no known kind and no schema id", body, err)
		}
	})
}

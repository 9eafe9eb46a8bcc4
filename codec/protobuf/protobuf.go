// Package protobuf is the AceMQ codec of protocol buffers
// (google.golang.org/protobuf): it writes application/x-protobuf and reads
// that, application/protobuf, application/vnd.google.protobuf and any
// */*+protobuf; it reads no message without a content type. It is a package
// of its own so that only a service that imports it links and downloads
// the protobuf runtime; the root package acemq does not depend on it.
//
// A typed consumer names the generated message's pointer type, as a
// publisher does:
//
//	acemq.Consume[*pb.OrderPlaced](ctx, conn, "orders", h, acemq.WithCodec(protobuf.Codec))
//	acemq.NewPublisher[*pb.OrderPlaced](conn, "orders", acemq.WithCodec(protobuf.Codec))
//
// The consumer decodes into a *T whose T is a nil *pb.OrderPlaced: the
// codec allocates the message and sets the handler's m.Body to it. Any
// other proto.Message given ready made, such as a dynamicpb.Message of a
// descriptor known only at run time, is decoded into as it is.
package protobuf

import (
	"errors"
	"fmt"
	"mime"
	"reflect"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
)

// Codec is the protobuf codec.
var Codec acemq.Codec = codec{}

// ErrNotMessage is matched (errors.Is) by the error for a value that is no
// protocol buffer message, or a pointer to one the codec cannot fill.
var ErrNotMessage = errors.New("protobuf codec: not a proto.Message")

type codec struct{}

func (codec) ContentType() string { return contract.ContentTypeProtobuf }

// Reads takes the protobuf types, ignoring case and parameters.
func (codec) Reads(contentType string) bool {
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil && !errors.Is(err, mime.ErrInvalidMediaParameter) {
		return false
	}
	switch mediaType {
	case contract.ContentTypeProtobuf, contract.ContentTypeProtobufIETF, contract.ContentTypeProtobufGoogle:
		return true
	}
	_, subtype, ok := strings.Cut(mediaType, "/")
	return ok && len(subtype) > len(contract.ContentTypeProtobufSuffix) && strings.HasSuffix(subtype, contract.ContentTypeProtobufSuffix)
}

// marshal is deterministic: the same message is always the same body
// (maps in key order), so a body can be compared or deduplicated.
var marshal = proto.MarshalOptions{Deterministic: true}

func (codec) Marshal(v any) ([]byte, error) {
	m, ok := v.(proto.Message)
	if !ok || isNil(v) {
		return nil, fmt.Errorf("acemq: %w: cannot marshal %s", ErrNotMessage, typeName(v))
	}
	b, err := marshal.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("acemq: protobuf codec: %w", err)
	}
	return b, nil
}

// Unmarshal decodes into a proto.Message, or through a pointer to a
// generated message's pointer (a typed consumer's *T), allocating the
// message when it is nil. A body that is not valid protobuf wire format, or
// whose fields do not fit the message's, is an error.
func (codec) Unmarshal(_ string, data []byte, v any) error {
	m, err := target(v)
	if err != nil {
		return err
	}
	if err := proto.Unmarshal(data, m); err != nil {
		return fmt.Errorf("acemq: protobuf codec: %s: %w", m.ProtoReflect().Descriptor().FullName(), err)
	}
	return nil
}

var (
	messageType = reflect.TypeFor[proto.Message]()
	dynamicType = reflect.TypeFor[*dynamicpb.Message]()
)

// target is the message to decode v's body into.
func target(v any) (proto.Message, error) {
	if m, ok := v.(proto.Message); ok && !isNil(v) {
		if _, dynamic := v.(*dynamicpb.Message); dynamic && m.ProtoReflect().Descriptor() == nil {
			return nil, fmt.Errorf("acemq: %w: a zero dynamicpb.Message has no descriptor; make it with dynamicpb.NewMessage", ErrNotMessage)
		}
		return m, nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || !rv.Type().Elem().Implements(messageType) || rv.Type().Elem().Kind() != reflect.Pointer {
		return nil, fmt.Errorf("acemq: %w: cannot unmarshal into %s, want a proto.Message or a pointer to one", ErrNotMessage, typeName(v))
	}
	inner := rv.Elem()
	if inner.IsNil() {
		// A dynamic message needs its descriptor, which no type carries.
		if inner.Type() == dynamicType {
			return nil, fmt.Errorf("acemq: %w: cannot allocate a *dynamicpb.Message (it needs its descriptor); decode into one made with dynamicpb.NewMessage", ErrNotMessage)
		}
		inner.Set(reflect.New(inner.Type().Elem()))
	}
	return inner.Interface().(proto.Message), nil
}

func isNil(v any) bool {
	rv := reflect.ValueOf(v)
	return !rv.IsValid() || (rv.Kind() == reflect.Pointer && rv.IsNil())
}

func typeName(v any) string {
	if isNil(v) {
		return fmt.Sprintf("a nil %T", v)
	}
	return fmt.Sprintf("%T", v)
}

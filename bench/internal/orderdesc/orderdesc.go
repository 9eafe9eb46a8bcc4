// Package orderdesc describes acemq.test.OrderPlaced, the protobuf message
// of the family's fixtures (codec-interop.json's proto_schema: message
// OrderPlaced { string order_id = 1; int64 total_cents = 2; string tenant =
// 3; }), as the FileDescriptorProto protoc would make of it. The codec
// benchmarks build a dynamicpb message of it, and micro/orderpb's gen.go
// generates the Go message from it: codec/protobuf's generated test message
// is internal to that package.
package orderdesc

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

// Path is the .proto file's name, as the generated code registers it.
const Path = "bench/internal/micro/orderpb/orderplaced.proto"

// GoPackage is the generated code's import path.
const GoPackage = "github.com/acemq-go/acemq/bench/internal/micro/orderpb"

// File returns a new FileDescriptorProto of orderplaced.proto.
func File() *descriptorpb.FileDescriptorProto {
	str, i64 := descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(), descriptorpb.FieldDescriptorProto_TYPE_INT64.Enum()
	opt := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()
	field := func(name, json string, n int32, typ *descriptorpb.FieldDescriptorProto_Type) *descriptorpb.FieldDescriptorProto {
		return &descriptorpb.FieldDescriptorProto{Name: proto.String(name), JsonName: proto.String(json), Number: proto.Int32(n), Label: opt, Type: typ}
	}
	return &descriptorpb.FileDescriptorProto{
		Name:    proto.String(Path),
		Package: proto.String("acemq.test"),
		Syntax:  proto.String("proto3"),
		Options: &descriptorpb.FileOptions{GoPackage: proto.String(GoPackage)},
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("OrderPlaced"),
			Field: []*descriptorpb.FieldDescriptorProto{
				field("order_id", "orderId", 1, str),
				field("total_cents", "totalCents", 2, i64),
				field("tenant", "tenant", 3, str),
			},
		}},
	}
}

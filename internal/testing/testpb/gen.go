//go:build ignore

// gen writes orderplaced.pb.go with protoc-gen-go but without protoc (not
// needed, and not installed): it builds the CodeGeneratorRequest protoc
// would send for orderplaced.proto and pipes it to the plugin.
//
//	go run gen.go
package main

import (
	"bytes"
	"log"
	"os"
	"os/exec"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/pluginpb"
)

func main() {
	str, i64 := descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(), descriptorpb.FieldDescriptorProto_TYPE_INT64.Enum()
	opt := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()
	field := func(name, json string, n int32, typ *descriptorpb.FieldDescriptorProto_Type) *descriptorpb.FieldDescriptorProto {
		return &descriptorpb.FieldDescriptorProto{Name: proto.String(name), JsonName: proto.String(json), Number: proto.Int32(n), Label: opt, Type: typ}
	}
	// message OrderPlaced { string order_id = 1; int64 total_cents = 2; string tenant = 3; }
	file := &descriptorpb.FileDescriptorProto{
		Name:    proto.String("internal/testing/testpb/orderplaced.proto"),
		Package: proto.String("acemq.test"),
		Syntax:  proto.String("proto3"),
		Options: &descriptorpb.FileOptions{GoPackage: proto.String("github.com/acemq-go/acemq/internal/testing/testpb")},
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("OrderPlaced"),
			Field: []*descriptorpb.FieldDescriptorProto{
				field("order_id", "orderId", 1, str),
				field("total_cents", "totalCents", 2, i64),
				field("tenant", "tenant", 3, str),
			},
		}},
	}
	req := &pluginpb.CodeGeneratorRequest{
		FileToGenerate: []string{file.GetName()},
		Parameter:      proto.String("paths=source_relative"),
		ProtoFile:      []*descriptorpb.FileDescriptorProto{file},
	}
	in, err := proto.Marshal(req)
	if err != nil {
		log.Fatal(err)
	}
	cmd := exec.Command("go", "run", "google.golang.org/protobuf/cmd/protoc-gen-go")
	cmd.Stdin, cmd.Stderr = bytes.NewReader(in), os.Stderr
	out, err := cmd.Output()
	if err != nil {
		log.Fatal(err)
	}
	var resp pluginpb.CodeGeneratorResponse
	if err := proto.Unmarshal(out, &resp); err != nil {
		log.Fatal(err)
	}
	if resp.Error != nil {
		log.Fatal(resp.GetError())
	}
	for _, f := range resp.File {
		// paths=source_relative names the file by the .proto's path.
		if err := os.WriteFile("orderplaced.pb.go", []byte(f.GetContent()), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

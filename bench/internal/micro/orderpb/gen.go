//go:build ignore

// gen writes orderplaced.pb.go with protoc-gen-go but without protoc (not
// installed): it builds the CodeGeneratorRequest protoc would send for
// orderplaced.proto, from the FileDescriptorProto the codec benchmarks'
// dynamicpb row uses (package orderdesc), and pipes it to the plugin.
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

	"github.com/acemq-go/acemq/bench/internal/orderdesc"
)

func main() {
	file := orderdesc.File()
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

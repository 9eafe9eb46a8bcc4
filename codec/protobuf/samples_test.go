package protobuf_test

import (
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/acemq-go/acemq/codec/protobuf"
	"github.com/acemq-go/acemq/internal/testing/codectest"
)

// Every protobuf sample of the family's codec-samples.json (Java's and the
// Go peer's google.protobuf.Struct) decodes to the record the file says
// (a Struct's numbers are doubles: 4250 reads 4250). Its bytes are not
// compared with what the codec writes: a Struct's fields are a map, which
// the samples hold in their writer's order and the codec writes sorted.
func TestCodecSamplesDecodeToTheirRecord(t *testing.T) {
	for _, s := range codectest.LoadSamples(t).Of(t, "protobuf") {
		t.Run(s.Producer, func(t *testing.T) {
			if !protobuf.Codec.Reads(s.ContentType) {
				t.Fatalf("the codec does not read %q", s.ContentType)
			}
			var got *structpb.Struct
			if err := protobuf.Codec.Unmarshal(s.ContentType, s.Body, &got); err != nil || !codectest.Same(t, got.AsMap(), s.Expected) {
				t.Errorf("decoded %v, %v; want %s", got.AsMap(), err, s.Expected)
			}
		})
	}
}

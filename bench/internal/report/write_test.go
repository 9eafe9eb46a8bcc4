package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acemq-go/acemq/bench/internal/micro"
)

// A micro-only run has no broker and no scenarios: the report says so and
// gives the codec table, in Markdown and in its JSON's "codecs".
func TestWriteCodecsWithoutABroker(t *testing.T) {
	r := Report{Mode: "micro", Codecs: []micro.Result{
		{Package: micro.CodecsPackage, Name: "BenchmarkCodec/toml/unmarshal", Iterations: 10, NsPerOp: 1149.62, BytesPerOp: 184, AllocsPerOp: 9, ContentType: "application/toml", BodyBytes: 110},
	}}
	var b strings.Builder
	if err := r.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		", no broker, ",
		"| codec benchmark | content type | body B | ns/op | B/op | allocs/op |",
		"| BenchmarkCodec/toml/unmarshal | application/toml | 110 | 1149.6 | 184 | 9 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "| scenario |") {
		t.Errorf("a scenario table without scenarios:\n%s", md)
	}

	path := filepath.Join(t.TempDir(), "r.json")
	if err := r.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Codecs []map[string]any `json:"codecs"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Codecs) != 1 || got.Codecs[0]["content_type"] != "application/toml" || got.Codecs[0]["body_bytes"] != 110.0 || got.Codecs[0]["allocs_per_op"] != 9.0 {
		t.Errorf("the JSON's codecs = %v", got.Codecs)
	}
}

package micro

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	out := `goos: linux
goarch: amd64
pkg: github.com/acemq-go/acemq
cpu: Some CPU @ 2.00GHz
BenchmarkEnvelopeWrite-2            	  912345	      1301 ns/op	     872 B/op	      12 allocs/op
BenchmarkSettle/retry-on-rung-2     	 5000000	        52.10 ns/op	       0 B/op	       0 allocs/op
BenchmarkNoMem                      	     100	     99 ns/op
PASS
ok  	github.com/acemq-go/acemq	3.2s
`
	got, err := Parse(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	want := []Result{
		{Name: "BenchmarkEnvelopeWrite", Iterations: 912345, NsPerOp: 1301, BytesPerOp: 872, AllocsPerOp: 12},
		{Name: "BenchmarkSettle/retry-on-rung", Iterations: 5000000, NsPerOp: 52.1},
		{Name: "BenchmarkNoMem", Iterations: 100, NsPerOp: 99},
	}
	if len(got) != len(want) {
		t.Fatalf("Parse = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("result %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

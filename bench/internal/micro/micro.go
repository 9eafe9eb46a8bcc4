// Package micro runs the Go benchmarks of the root package and of the
// telemetry adapters, and reads their results from `go test -bench` output;
// and it times each codec's Marshal and Unmarshal of one message in this
// process (RunCodecs).
package micro

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"

	"golang.org/x/tools/benchmark/parse"
)

// Packages are the packages whose benchmarks Run runs, relative to the
// acemq module: the core, and the adapters (their cost per message).
var Packages = []string{".", "./acemqprom", "./acemqotel"}

// Result is one benchmark's line of output.
type Result struct {
	// Package is the benchmark's package, as in Packages.
	Package     string  `json:"package"`
	Name        string  `json:"name"`
	Iterations  int64   `json:"iterations"`
	NsPerOp     float64 `json:"ns_per_op"`
	BytesPerOp  int64   `json:"bytes_per_op"`
	AllocsPerOp int64   `json:"allocs_per_op"`
	// ContentType and BodyBytes are a codec benchmark's (RunCodecs): the
	// body's content type and its length in bytes.
	ContentType string `json:"content_type,omitempty"`
	BodyBytes   int    `json:"body_bytes,omitempty"`
}

// Run runs `go test -run '^$' -bench . -benchmem` on each of Packages in
// dir with benchtime (e.g. "1s" or "2000x") and returns what it measured.
// The raw output is copied to log.
func Run(ctx context.Context, dir, benchtime string, log io.Writer) ([]Result, error) {
	var all []Result
	for _, pkg := range Packages {
		cmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", ".", "-benchmem", "-benchtime", benchtime, pkg)
		cmd.Dir = dir
		var out bytes.Buffer
		cmd.Stdout = io.MultiWriter(&out, log)
		cmd.Stderr = log
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("go test -bench %s in %s: %w", pkg, dir, err)
		}
		results, err := Parse(&out)
		if err != nil {
			return nil, err
		}
		for i := range results {
			results[i].Package = pkg
		}
		all = append(all, results...)
	}
	return all, nil
}

// Parse reads the benchmark result lines of `go test -bench` output (with
// golang.org/x/tools/benchmark/parse) and ignores every other line. The
// -GOMAXPROCS suffix is dropped from the names.
func Parse(r io.Reader) ([]Result, error) {
	var results []Result
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		b, err := parse.ParseLine(sc.Text())
		if err != nil {
			continue // not a result line (a header, a log line, PASS)
		}
		results = append(results, Result{Name: trimProcs(b.Name), Iterations: int64(b.N), NsPerOp: b.NsPerOp,
			BytesPerOp: int64(b.AllocedBytesPerOp), AllocsPerOp: int64(b.AllocsPerOp)})
	}
	return results, sc.Err()
}

// trimProcs drops the "-N" GOMAXPROCS suffix go test adds to a name.
func trimProcs(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return name
	}
	if _, err := strconv.Atoi(name[i+1:]); err != nil {
		return name
	}
	return name[:i]
}

package main

import (
	"context"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acemq-go/acemq/bench/internal/harness"
)

// -only takes comma-separated names, one of which holds a comma itself.
func TestOnly(t *testing.T) {
	for list, want := range map[string][]string{
		"":                    nil,
		harness.PerMessageTTL: {harness.PerMessageTTL},
		harness.PublishConfirmed + ", " + harness.PerMessageTTL + "," + harness.RungKinds: {harness.PerMessageTTL, harness.PublishConfirmed, harness.RungKinds},
		harness.PerMessageTTL + "," + harness.ConsumeAck1:                                 {harness.ConsumeAck1, harness.PerMessageTTL},
	} {
		got, err := only(list)
		if err != nil {
			t.Errorf("only(%q): %v", list, err)
			continue
		}
		slices.Sort(want)
		if keys := slices.Sorted(maps.Keys(got)); !slices.Equal(keys, want) {
			t.Errorf("only(%q) = %q, want %q", list, keys, want)
		}
	}
	for _, bad := range []string{"nope", harness.PublishConfirmed + ",nope", "per-message TTL"} {
		if _, err := only(bad); err == nil || !strings.Contains(err.Error(), "no scenario is named") {
			t.Errorf("only(%q): %v, want a refusal", bad, err)
		}
	}
}

// -micro-only runs the codec benchmarks without a broker; without it, no
// broker is a refusal.
func TestMicroOnlyNeedsNoBroker(t *testing.T) {
	out := filepath.Join(t.TempDir(), "latest.json")
	c := config{microOnly: true, codecs: true, benchtime: "1x", out: out, root: filepath.Join("..", "..", "..")}
	var stdout strings.Builder
	if err := run(context.Background(), c, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "| BenchmarkCodec/json/marshal | application/json |") || strings.Contains(stdout.String(), "| scenario |") {
		t.Errorf("the Markdown of a micro-only run:\n%s", stdout.String())
	}
	if data, err := os.ReadFile(out); err != nil || !strings.Contains(string(data), `"codecs"`) {
		t.Errorf("the JSON report: %v\n%s", err, data)
	}

	c.microOnly = false
	if err := run(context.Background(), c, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "no broker") {
		t.Errorf("run without a broker or -micro-only: %v, want a refusal", err)
	}
}

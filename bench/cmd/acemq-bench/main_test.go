package main

import (
	"maps"
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

package acemq_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// adapters are the telemetry and management adapters: what every service
// that wants metrics, traces or health links.
var adapters = []string{"acemqprom", "acemqotel", "actuator"}

// An adapter imports the core (the root, contract, transport and internal
// machinery) and no pattern package: a service that exports metrics links
// no outbox (the relay reports through an interface acemqprom declares).
func TestNoAdapterImportsAPattern(t *testing.T) {
	const module = "github.com/acemq-go/acemq"
	core := []string{"", "contract", "transport", "internal"}
	for _, dir := range adapters {
		out, err := exec.Command("go", "list", "-deps", "./"+dir).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps ./%s: %v\n%s", dir, err, out)
		}
		for _, pkg := range strings.Fields(string(out)) {
			rest, ours := strings.CutPrefix(pkg, module)
			if !ours || rest != "" && rest[0] != '/' {
				continue // not this module's
			}
			top, _, _ := strings.Cut(strings.TrimPrefix(rest, "/"), "/")
			if top != dir && !slices.Contains(core, top) {
				t.Errorf("%s imports %s, a pattern it does not need", dir, pkg)
			}
		}
	}
}

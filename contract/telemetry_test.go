package contract_test

import (
	"go/constant"
	"go/types"
	"regexp"
	"testing"

	"github.com/acemq-go/acemq/contract"
)

// TestDocTelemetryOutcomes holds the page's table of outcomes folded into
// the family's words to the functions that fold them: each row gives what
// the function says, and every Outcome and PublishOutcome has a row.
func TestDocTelemetryOutcomes(t *testing.T) {
	consts := constants(t)
	value := func(name string) (string, string) {
		c, ok := consts[name]
		if !ok {
			t.Fatalf("docs/contract.md names contract.%s, which is no constant", name)
		}
		return constant.StringVal(c.Val()), c.Type().(*types.Named).Obj().Name()
	}
	call := regexp.MustCompile(`^contract\.([A-Za-z]+)\.Telemetry\((?:contract\.([A-Za-z]+))?\)$`)
	rowed := map[string]bool{}
	for _, r := range docRows(t) {
		m := call.FindStringSubmatch(r.name)
		if m == nil {
			continue
		}
		v, typ := value(m[1])
		rowed[m[1]] = true
		var got contract.TelemetryOutcome
		switch typ {
		case "PublishOutcome":
			got = contract.PublishOutcome(v).Telemetry()
		case "Outcome":
			class, ctyp := value(m[2])
			if ctyp != "ReasonClass" {
				t.Fatalf("docs/contract.md:%d: contract.%s is no ReasonClass", r.line, m[2])
			}
			got = contract.Outcome(v).Telemetry(contract.ReasonClass(class))
		default:
			t.Fatalf("docs/contract.md:%d: contract.%s is a %s, no outcome", r.line, m[1], typ)
		}
		if string(got) != r.value {
			t.Errorf("docs/contract.md:%d: %s is %q, the page says %q", r.line, r.name, got, r.value)
		}
	}
	for name, c := range consts {
		if n, ok := c.Type().(*types.Named); ok && (n.Obj().Name() == "Outcome" || n.Obj().Name() == "PublishOutcome") && !rowed[name] {
			t.Errorf("contract.%s has no row of its family outcome in docs/contract.md", name)
		}
	}
}

// TestDocPrometheusNames holds the page's table of rendered names to
// Metric.Prometheus: every metric has a row, giving the name it renders.
func TestDocPrometheusNames(t *testing.T) {
	byName := map[string]contract.Metric{}
	for _, m := range contract.Metrics() {
		byName[m.Name] = m
	}
	seen := map[string]bool{}
	for _, r := range docRows(t) {
		m, ok := byName[r.name]
		if !ok {
			continue
		}
		seen[r.name] = true
		if got := m.Prometheus(); got != r.value {
			t.Errorf("docs/contract.md:%d renders %s as %q; Prometheus gives %q", r.line, r.name, r.value, got)
		}
	}
	for name := range byName {
		if !seen[name] {
			t.Errorf("%s has no row of its Prometheus name in docs/contract.md", name)
		}
	}
}

func TestPrometheusName(t *testing.T) {
	for _, c := range []struct {
		name    string
		kind    contract.MetricKind
		seconds bool
		want    string
	}{
		{"acemq.publish.total", contract.Counter, false, "acemq_publish_total"},
		{"acemq.messages.set.aside.failed", contract.Counter, false, "acemq_messages_set_aside_failed_total"},
		{"acemq.consume.duration", contract.Histogram, true, "acemq_consume_duration_seconds"},
		{"acemq.outbox.lag", contract.Gauge, true, "acemq_outbox_lag_seconds"},
		{"acemq.consume.in.flight", contract.Gauge, false, "acemq_consume_in_flight"},
	} {
		if got := contract.PrometheusName(c.name, c.kind, c.seconds); got != c.want {
			t.Errorf("PrometheusName(%q, %s, %v) = %q, want %q", c.name, c.kind, c.seconds, got, c.want)
		}
	}
}

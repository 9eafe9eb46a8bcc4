package acemqprom_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v3"

	"github.com/acemq-go/acemq/acemqprom"
	"github.com/acemq-go/acemq/contract"
)

// exported are the series names acemqprom exports (a histogram's as
// _bucket, _count and _sum), each with the labels it may be selected or
// grouped by.
func exported(t *testing.T) map[string][]string {
	t.Helper()
	m, err := acemqprom.New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	described := map[string]bool{}
	ch := make(chan *prometheus.Desc)
	go func() { m.Describe(ch); close(ch) }()
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	for d := range ch {
		described[fqName.FindStringSubmatch(d.String())[1]] = true
	}
	names := map[string][]string{}
	for _, metric := range contract.Metrics() {
		name := metric.Prometheus()
		if !described[name] {
			t.Fatalf("acemqprom does not describe %s (%s)", name, metric.Name)
		}
		var labels []string
		for _, tag := range metric.Tags {
			labels = append(labels, contract.PrometheusLabel(tag))
		}
		if metric.Kind != contract.Histogram {
			names[name] = labels
			continue
		}
		names[name+"_bucket"] = append(slices.Clone(labels), "le")
		names[name+"_count"] = labels
		names[name+"_sum"] = labels
	}
	return names
}

// targetLabels are the labels Prometheus adds to every series it scrapes.
var targetLabels = []string{"instance", "job"}

var (
	metricName = regexp.MustCompile(`\b(acemq_[a-z_]+)\b(\{[^}]*\})?`)
	matcher    = regexp.MustCompile(`([a-z_]+)\s*(?:=~|!~|!=|=)\s*"([^"]*)"`)
	grouping   = regexp.MustCompile(`\b(?:by|without)\s*\(([^)]*)\)`)
)

// checkExpr fails t for each metric of expr that acemqprom does not export,
// each label it selects or groups by that those metrics lack, and each
// outcome it selects that is not the family's word.
func checkExpr(t *testing.T, where, expr string, names map[string][]string, outcomes []string) {
	t.Helper()
	uses := metricName.FindAllStringSubmatch(expr, -1)
	if len(uses) == 0 {
		t.Errorf("%s: %q uses no acemq metric", where, expr)
	}
	var all []string
	for _, u := range uses {
		labels, ok := names[u[1]]
		if !ok {
			t.Errorf("%s: %s is no metric acemqprom exports (in %q)", where, u[1], expr)
			continue
		}
		all = append(all, labels...)
		for _, mt := range matcher.FindAllStringSubmatch(u[2], -1) {
			if !slices.Contains(labels, mt[1]) && !slices.Contains(targetLabels, mt[1]) {
				t.Errorf("%s: %s has no label %s (in %q)", where, u[1], mt[1], expr)
			}
			if mt[1] == contract.TagOutcome {
				for _, v := range strings.Split(mt[2], "|") {
					if !slices.Contains(outcomes, v) {
						t.Errorf("%s: outcome %q is not one of the family's words (in %q)", where, v, expr)
					}
				}
			}
		}
	}
	for _, g := range grouping.FindAllStringSubmatch(expr, -1) {
		for _, l := range strings.Split(g[1], ",") {
			if l = strings.TrimSpace(l); l != "" && !slices.Contains(all, l) && !slices.Contains(targetLabels, l) {
				t.Errorf("%s: no metric of %q has the label %s", where, expr, l)
			}
		}
	}
}

// familyOutcomes are the family's outcome words.
func familyOutcomes() []string {
	var out []string
	for _, m := range contract.Metrics() {
		for _, o := range m.Outcomes {
			out = append(out, string(o))
		}
	}
	return out
}

// Every metric, label and outcome the Grafana dashboard's queries use is
// one acemqprom exports.
func TestDashboardUsesExportedMetrics(t *testing.T) {
	names, outcomes := exported(t), familyOutcomes()
	data, err := os.ReadFile(filepath.Join("..", "dashboards", "acemq.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dashboard struct {
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &dashboard); err != nil {
		t.Fatal(err)
	}
	exprs := 0
	for _, p := range dashboard.Panels {
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("the panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			exprs++
			checkExpr(t, "panel "+p.Title, q.Expr, names, outcomes)
		}
	}
	for _, v := range dashboard.Templating.List {
		if v.Definition != "" {
			checkExpr(t, "variable "+v.Name, v.Definition, names, outcomes)
		}
	}
	if exprs < 15 {
		t.Errorf("the dashboard has %d queries; it lost its panels", exprs)
	}
}

// Every metric, label and outcome the alert rules use is one acemqprom
// exports (promtool check rules checks their syntax: make rules).
func TestAlertRulesUseExportedMetrics(t *testing.T) {
	names, outcomes := exported(t), familyOutcomes()
	data, err := os.ReadFile(filepath.Join("..", "dashboards", "acemq-alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(data, &rules); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			n++
			checkExpr(t, "alert "+r.Alert, r.Expr, names, outcomes)
		}
	}
	if n < 5 {
		t.Errorf("the rules file has %d rules; it lost them", n)
	}
}

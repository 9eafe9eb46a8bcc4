package report

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/acemq-go/acemq/bench/internal/micro"
)

// Report is everything one run measured, and where.
type Report struct {
	Started   time.Time      `json:"started"`
	Mode      string         `json:"mode"`
	Machine   Machine        `json:"machine"`
	Broker    string         `json:"broker"`
	GitCommit string         `json:"git_commit"`
	Rows      []Row          `json:"scenarios"`
	Micro     []micro.Result `json:"micro,omitempty"`
	// Codecs are micro.RunCodecs's rows: each format's Marshal and Unmarshal.
	Codecs []micro.Result `json:"codecs,omitempty"`
	Notes  []string       `json:"notes,omitempty"`
}

// WriteJSON writes r, indented, to path, creating its directory.
func (r Report) WriteJSON(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// WriteMarkdown writes r's tables and notes.
func (r Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	broker := r.Broker
	if broker == "" {
		broker = "no broker"
	}
	fmt.Fprintf(&b, "%s run, %s: %d cores (%s), %s, %s, commit %s\n",
		r.Mode, r.Started.UTC().Format(time.RFC3339), r.Machine.Cores, r.Machine.CPU, r.Machine.GoVersion, broker, r.GitCommit)
	if len(r.Rows) > 0 {
		b.WriteString("\n| scenario | implementation | messages | rounds | median s | msgs/s (median) | msgs/s min..max | × raw (median) | × raw min..max | CPU µs/msg | allocs/msg | late p50 / p99 / max ms |\n")
		b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	}
	for _, row := range r.Rows {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %.3f | %.0f | %.0f..%.0f | %s | %s | %.1f | %.0f | %s |\n",
			row.Scenario, row.Implementation, row.Messages, row.Rounds, row.Seconds,
			row.MsgsPerSec, row.MsgsPerSecMin, row.MsgsPerSecMax,
			ratio(row.RatioToRaw, row.RatioTo), ratioSpread(row.RatioMin, row.RatioMax),
			row.CPUMicrosPerMsg, row.AllocsPerMsg, late(row))
	}
	writeOpenLoop(&b, r.Rows)
	for _, row := range r.Rows {
		for _, e := range row.Errors {
			fmt.Fprintf(&b, "\nFAILED %s / %s: %s", row.Scenario, row.Implementation, e)
		}
	}
	if len(r.Micro) > 0 {
		b.WriteString("\n| micro benchmark | ns/op | B/op | allocs/op |\n|---|--:|--:|--:|\n")
		for _, m := range r.Micro {
			name := m.Name
			if m.Package != "." && m.Package != "" {
				name = strings.TrimPrefix(m.Package, "./") + " " + name
			}
			fmt.Fprintf(&b, "| %s | %.1f | %d | %d |\n", name, m.NsPerOp, m.BytesPerOp, m.AllocsPerOp)
		}
	}
	if len(r.Codecs) > 0 {
		b.WriteString("\n| codec benchmark | content type | body B | ns/op | B/op | allocs/op |\n|---|---|--:|--:|--:|--:|\n")
		for _, m := range r.Codecs {
			fmt.Fprintf(&b, "| %s | %s | %d | %.1f | %d | %d |\n", m.Name, m.ContentType, m.BodyBytes, m.NsPerOp, m.BytesPerOp, m.AllocsPerOp)
		}
	}
	if len(r.Notes) > 0 {
		b.WriteString("\nNotes:\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ratio is a row's median ratio; one to another baseline than raw names it
// ("0.80 × acemq contract").
func ratio(f *float64, to string) string {
	if f == nil {
		return "–"
	}
	if to != "" {
		return fmt.Sprintf("%.2f × %s", *f, to)
	}
	return fmt.Sprintf("%.2f", *f)
}

func ratioSpread(lo, hi *float64) string {
	if lo == nil || hi == nil {
		return "–"
	}
	return fmt.Sprintf("%.2f..%.2f", *lo, *hi)
}

func late(row Row) string {
	if row.LateP50Ms == nil {
		return "–"
	}
	return fmt.Sprintf("%.0f / %.0f / %.0f", *row.LateP50Ms, *row.LateP99Ms, *row.LateMaxMs)
}

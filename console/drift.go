package console

import (
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/admin"
	"github.com/acemq-go/acemq/topologyfile"
	"github.com/acemq-go/acemq/transport"
)

type driftPage struct {
	Configured string // the --topology file, if any
	File       string // the file compared
	Problems   []string
	Declared   int
	Compared   bool
	Report     admin.Report
}

// drift compares a topology file (the configured one, or an upload) with
// the broker. It changes nothing: a GET with configured=1 compares the
// configured file (the overview links to it).
func (s *Server) drift(w http.ResponseWriter, r *http.Request) {
	p := driftPage{Configured: s.c.Topology}
	configured := r.FormValue("configured") != "" && s.c.Topology != ""
	if r.Method == http.MethodGet && !configured {
		s.render(w, http.StatusOK, "drift", "Drift", p)
		return
	}
	var (
		data []byte
		err  error
	)
	if path, name, ok := uploadedFile(r, false); ok { // within maxTopology
		p.File = name
		data, err = os.ReadFile(path)
	} else if configured {
		p.File = s.c.Topology
		data, err = os.ReadFile(s.c.Topology)
	} else {
		s.fail(w, r, http.StatusBadRequest, "No topology file", "Choose a topology file (YAML) to compare with the broker.")
		return
	}
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, "Cannot read the topology file", err.Error())
		return
	}
	plan, problems, err := planTopology(p.File, data)
	if problems != nil {
		p.Problems = problems
		s.render(w, http.StatusUnprocessableEntity, "drift", "Drift", p)
		return
	}
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, "The topology file does not read", err.Error())
		return
	}
	live, err := admin.Read(r.Context(), s.c.Endpoint)
	if err != nil {
		s.failErr(w, r, "The management API did not answer", err)
		return
	}
	p.Compared, p.Declared, p.Report = true, len(plan), admin.Diff(plan, live)
	s.render(w, http.StatusOK, "drift", "Drift", p)
}

// planTopology reads and plans a topology file (data, from the file
// path): the problems of one that does not validate, or why it does not
// read.
func planTopology(path string, data []byte) ([]transport.Declaration, []string, error) {
	t, err := topologyfile.Parse(data)
	var perr *topologyfile.Error
	if errors.As(err, &perr) {
		perr.Path = path
	}
	if err != nil {
		return nil, nil, err
	}
	plan, err := t.Plan()
	var invalid *acemq.ValidationError
	if errors.As(err, &invalid) {
		return nil, invalid.Problems, err
	}
	if err != nil {
		return nil, nil, fmt.Errorf("the topology file does not plan: %w", err)
	}
	return plan, nil, nil
}

// driftSummary is the overview's line on the configured topology file.
type driftSummary struct {
	File     string
	Findings int
	Problem  string // why it could not be compared
}

// configuredDrift compares the configured topology file with live, for
// the overview; nil when no file is configured.
func (s *Server) configuredDrift(live admin.State) *driftSummary {
	if s.c.Topology == "" {
		return nil
	}
	d := &driftSummary{File: s.c.Topology}
	data, err := os.ReadFile(s.c.Topology)
	if err != nil {
		d.Problem = err.Error()
		return d
	}
	plan, problems, err := planTopology(s.c.Topology, data)
	switch {
	case problems != nil:
		d.Problem = fmt.Sprintf("it does not validate (%d problems)", len(problems))
	case err != nil:
		d.Problem = err.Error()
	default:
		d.Findings = len(admin.Diff(plan, live).Findings)
	}
	return d
}

package console

import (
	"errors"
	"net/http"
	"os"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/admin"
	"github.com/acemq-go/acemq/topologyfile"
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
// the broker. It changes nothing.
func (s *Server) drift(w http.ResponseWriter, r *http.Request) {
	p := driftPage{Configured: s.c.Topology}
	if r.Method == http.MethodGet {
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
	} else if r.FormValue("configured") != "" && s.c.Topology != "" {
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
	t, err := topologyfile.Parse(data)
	var perr *topologyfile.Error
	if errors.As(err, &perr) {
		perr.Path = p.File
	}
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, "The topology file does not read", err.Error())
		return
	}
	plan, err := t.Plan()
	var invalid *acemq.ValidationError
	if errors.As(err, &invalid) {
		p.Problems = invalid.Problems
		s.render(w, http.StatusUnprocessableEntity, "drift", "Drift", p)
		return
	}
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, "The topology file does not plan", err.Error())
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

package console

import (
	"encoding/json"
	"io"
	"mime"
	"net/http"

	"github.com/acemq-go/acemq/contract"
)

func (s *Server) job(w http.ResponseWriter, r *http.Request) (*job, bool) {
	j, ok := s.jobs.get(r.URL.Query().Get("id"))
	if !ok {
		s.fail(w, r, http.StatusNotFound, "No such job", "There is no job "+r.URL.Query().Get("id")+" (the console may have restarted).")
	}
	return j, ok
}

func (s *Server) jobPage(w http.ResponseWriter, r *http.Request) {
	if j, ok := s.job(w, r); ok {
		st := j.state()
		s.render(w, http.StatusOK, "job", st.Op+" "+st.Queue, st)
	}
}

func (s *Server) jobJSON(w http.ResponseWriter, r *http.Request) {
	if j, ok := s.job(w, r); ok {
		w.Header().Set("Content-Type", contract.ContentTypeJSON)
		_ = jsonEncode(w, j.state())
	}
}

func (s *Server) jobDownload(w http.ResponseWriter, r *http.Request) {
	j, ok := s.job(w, r)
	if !ok {
		return
	}
	st := j.state()
	j.mu.Lock()
	file, name := j.file, j.fileName
	j.mu.Unlock()
	if !st.Download {
		s.fail(w, r, http.StatusNotFound, "Nothing to download", "This job has no file to download (yet).")
		return
	}
	w.Header().Set("Content-Type", "application/jsonl")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	http.ServeFile(w, r, file)
}

func jsonEncode(w io.Writer, v any) error { return json.NewEncoder(w).Encode(v) }

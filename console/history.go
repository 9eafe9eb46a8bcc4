package console

import (
	"net/http"
	"time"
)

// historyRow is a job on the history page.
type historyRow struct {
	ID, Op, Queue, Outcome, Summary string
	Who, Addr                       string
	Started                         time.Time
	Confirmed                       int
}

// history lists this process's jobs, newest first: when, who, what, on
// which queue, and how it went (the audit log keeps them beyond a
// restart).
func (s *Server) history(w http.ResponseWriter, _ *http.Request) {
	var rows []historyRow
	for _, j := range s.jobs.list() {
		st := j.state()
		j.mu.Lock()
		row := historyRow{ID: st.ID, Op: st.Op, Queue: st.Queue, Outcome: st.outcome(), Summary: st.Summary,
			Who: j.Who, Addr: j.Addr, Started: j.started, Confirmed: j.Confirmed}
		j.mu.Unlock()
		if st.Error != "" {
			row.Summary += ". It stopped: " + st.Error
		}
		rows = append(rows, row)
	}
	s.render(w, http.StatusOK, "history", "Jobs", rows)
}

package console

import (
	"cmp"
	"net/http"
	"slices"
	"time"

	"github.com/acemq-go/acemq/admin"
	"github.com/acemq-go/acemq/deadletter"
)

// sourceRow is a source queue on the overview.
type sourceRow struct {
	Source    string
	Stats     admin.QueueStats
	Exists    bool
	DLQ       *deadletter.QueueInfo
	Parked    *deadletter.QueueInfo
	DLQRate   float64 // dead letters a second
	Rungs     []deadletter.RungInfo
	Waiting   int
	Attention bool
}

func (r sourceRow) deadLetters() int {
	n := 0
	for _, q := range []*deadletter.QueueInfo{r.DLQ, r.Parked} {
		if q != nil {
			n += q.Messages
		}
	}
	return n
}

func (r sourceRow) oldest() time.Duration {
	var d time.Duration = -1
	for _, q := range []*deadletter.QueueInfo{r.DLQ, r.Parked} {
		if q != nil && q.Messages > 0 {
			d = max(d, q.Oldest)
		}
	}
	return d
}

func (s *Server) overview(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	state, err := admin.Read(ctx, s.c.Endpoint)
	if err != nil {
		s.failErr(w, r, "The management API did not answer", err)
		return
	}
	l, err := deadletter.List(ctx, s.c.Conn, state.Queues, s.c.Now())
	if err != nil {
		s.failErr(w, r, "Listing the dead-letter queues failed", err)
		return
	}
	rows := map[string]*sourceRow{}
	row := func(source string) *sourceRow {
		if rows[source] == nil {
			st, ok := state.Stats[source]
			rows[source] = &sourceRow{Source: source, Stats: st, Exists: ok}
		}
		return rows[source]
	}
	for i := range l.Queues {
		q := &l.Queues[i]
		sr := row(q.Source)
		if deadletter.IsDeadLetterQueue(q.Name) {
			sr.DLQ, sr.DLQRate = q, state.Stats[q.Name].PublishRate
		} else {
			sr.Parked = q
		}
	}
	for _, src := range l.Sources {
		sr := row(src.Source)
		sr.Rungs, sr.Waiting = src.Rungs, src.Waiting
	}
	out := make([]sourceRow, 0, len(rows))
	for _, sr := range rows {
		sr.Attention = sr.deadLetters() > 0
		out = append(out, *sr)
	}
	// The queues that need attention first: most dead letters, oldest.
	slices.SortFunc(out, func(a, b sourceRow) int {
		return cmp.Or(-cmp.Compare(a.deadLetters(), b.deadLetters()), -cmp.Compare(a.oldest(), b.oldest()), cmp.Compare(a.Source, b.Source))
	})
	s.render(w, http.StatusOK, "overview", "Dead letters", overviewPage{Sources: out, Drift: s.configuredDrift(state)})
}

// overviewPage is the overview: the source queues, and the drift of the
// configured topology file, if any.
type overviewPage struct {
	Sources []sourceRow
	Drift   *driftSummary
}

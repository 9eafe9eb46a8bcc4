package console

import (
	"context"
	"log/slog"
	"net/http"
)

// caller is who made a request: the audit log and the job history name
// them so.
type caller struct {
	// Who is the basic-auth user; "token <short id>" for a browser signed in
	// with the token (short id naming its session, never the cookie);
	// "token" for a request with the bearer token; "local" for a loopback
	// console without credentials.
	Who string
	// Addr is the client's address (the proxy's, behind one).
	Addr string
	// csrf is the token its forms carry, "" when it needs none (a bearer
	// token is no ambient credential a browser adds by itself).
	csrf string
	// session is its browser session's id, "" without one.
	session string
}

type callerKey struct{}

// callerOf is the caller secure found for the request of ctx.
func callerOf(ctx context.Context) caller {
	c, _ := ctx.Value(callerKey{}).(caller)
	return c
}

// audit writes one line of the audit log, naming c.
func (s *Server) audit(c caller, msg string, attrs ...slog.Attr) {
	attrs = append([]slog.Attr{slog.String("who", c.Who), slog.String("addr", c.Addr)}, attrs...)
	s.log.LogAttrs(context.Background(), slog.LevelInfo, msg, attrs...)
}

// auditAction writes the audit line of an action done within its request
// (such as an edit and retry of one message): who, what, which queue, the
// outcome ("ok", "failed", "refused"...) and what else says how many or
// which.
func (s *Server) auditAction(r *http.Request, action, queue, outcome string, attrs ...slog.Attr) {
	s.audit(callerOf(r.Context()), "console action",
		append([]slog.Attr{slog.String("action", action), slog.String("queue", queue), slog.String("outcome", outcome)}, attrs...)...)
}

// auditJobStart writes the audit line of a confirmed job as it starts,
// and marks the job with its caller for the history.
func (s *Server) auditJobStart(r *http.Request, j *job, confirmed int) {
	c := callerOf(r.Context())
	j.mu.Lock()
	j.Who, j.Addr, j.Confirmed = c.Who, c.Addr, confirmed
	j.mu.Unlock()
	s.audit(c, "console action", slog.String("action", j.Op), slog.String("queue", j.Queue),
		slog.String("job", j.ID), slog.Int("confirmed", confirmed), slog.String("outcome", "started"))
}

// auditJobEnd writes the audit line of a job that ended: how many it
// moved, left and may have doubled, and how it went.
func (s *Server) auditJobEnd(j *job) {
	st := j.state()
	st.Done = true // finished; shown as done once this line is written
	j.mu.Lock()
	c, confirmed := caller{Who: j.Who, Addr: j.Addr}, j.Confirmed
	j.mu.Unlock()
	attrs := []slog.Attr{slog.String("action", st.Op), slog.String("queue", st.Queue), slog.String("job", st.ID),
		slog.Int("confirmed", confirmed), slog.Int("taken", st.Taken), slog.Int("moved", st.Moved),
		slog.Int("left", st.Left), slog.Int("doubtful", st.Doubtful), slog.String("outcome", st.outcome()),
		slog.String("summary", st.Summary)}
	if st.Error != "" {
		attrs = append(attrs, slog.String("error", st.Error))
	}
	s.audit(c, "console action", attrs...)
}

// outcome is how a job went, in a word: running; failed (it stopped on
// an error, leaving the rest where they were); doubtful (some messages may
// be in two places, a connection lost mid-move); or ok. The counts say
// the rest.
func (st jobState) outcome() string {
	switch {
	case !st.Done:
		return "running"
	case st.Error != "":
		return "failed"
	case st.Doubtful > 0:
		return "doubtful"
	}
	return "ok"
}

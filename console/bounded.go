package console

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// DefaultPageTimeout bounds a page's broker work when Config.PageTimeout
// is 0.
const DefaultPageTimeout = 10 * time.Second

// bounded answers every page within the console's page timeout: the
// handler runs with a context that ends then, and when it has not answered
// by then (a call that does not heed its context: a channel's close on a
// paused node, say) the page says what is wrong with the broker instead.
// The handler's late answer is dropped. Static files and downloads, which
// ask the broker nothing, and imports, whose upload may take longer than a
// page, are not bounded.
func (s *Server) bounded(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/static/") || r.URL.Path == "/job/download" || r.URL.Path == "/import" {
			next.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), s.c.PageTimeout)
		defer cancel()
		b := &buffered{header: http.Header{}, status: http.StatusOK, inner: w}
		done := make(chan any, 1)
		go func() {
			defer func() { done <- recover() }()
			next.ServeHTTP(b, r.WithContext(ctx))
		}()
		select {
		case p := <-done:
			if p != nil {
				slog.Error("console: a page failed", "path", r.URL.Path, "panic", p)
				s.fail(w, r, http.StatusInternalServerError, "The page failed", fmt.Sprint(p))
				return
			}
			for k, v := range b.header {
				w.Header()[k] = v
			}
			w.WriteHeader(b.status)
			_, _ = w.Write(b.body.Bytes())
		case <-ctx.Done():
			s.brokerSilent(w, r, fmt.Sprintf("The broker did not answer within %s", s.c.PageTimeout))
		}
	})
}

// buffered keeps a handler's answer until it is complete.
type buffered struct {
	header http.Header
	status int
	body   bytes.Buffer
	inner  http.ResponseWriter // written once the answer is complete
}

// Unwrap lets render find the caller (callerOfWriter) through it.
func (b *buffered) Unwrap() http.ResponseWriter { return b.inner }

func (b *buffered) Header() http.Header         { return b.header }
func (b *buffered) WriteHeader(status int)      { b.status = status }
func (b *buffered) Write(p []byte) (int, error) { return b.body.Write(p) }

// brokerSilent renders a 504 saying why the broker did not answer, as the
// connection knows it without asking the broker.
func (s *Server) brokerSilent(w http.ResponseWriter, r *http.Request, title string) {
	s.fail(w, r, http.StatusGatewayTimeout, title, s.brokerState()+" Nothing was changed by this page; try again once the broker answers.")
}

// brokerState says in words what the connection knows of the broker.
func (s *Server) brokerState() string {
	st := s.c.Conn.State()
	switch {
	case st.Closed:
		return "The console's connection to the broker is closed."
	case !st.Connected && st.LastError != nil:
		return fmt.Sprintf("The connection to the broker was lost (%s, %s ago) and is being reopened: the broker is down or unreachable.",
			st.LastError, s.c.Now().Sub(st.LastErrorAt).Truncate(time.Second))
	case !st.Connected:
		return "The console is not connected to the broker; it is reconnecting."
	case st.Blocked:
		return fmt.Sprintf("The broker blocks this connection (%s): a memory or disk alarm. It reads nothing more from a connection that publishes until the alarm clears.", st.BlockedReason)
	}
	return "The connection is open, but the broker did not answer: it may be paused, overloaded, or cut off by the network."
}

// blockedReason says why a job waits, when the broker blocks the
// connection's publishes, else "".
func (s *Server) blockedReason() string {
	st := s.c.Conn.State()
	if st.Connected && st.Blocked {
		return fmt.Sprintf("Waiting: the broker blocks this connection's publishes (%s), a memory or disk alarm. The job goes on once the alarm clears; nothing is lost meanwhile.", st.BlockedReason)
	}
	if !st.Connected && !st.Closed {
		return "The connection to the broker is lost and being reopened: the job waits for it, or stops, leaving what it did not move where it was."
	}
	return ""
}

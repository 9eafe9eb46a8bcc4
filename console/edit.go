package console

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/acemq-go/acemq/admin"
	"github.com/acemq-go/acemq/deadletter"
	"github.com/acemq-go/acemq/transport"
)

// The edit and retry of one message: GET /edit opens it in an editor,
// POST /edit with step "review" shows what will be published (step "edit"
// goes back to the editor with the edits), step "retry" retries it
// (deadletter.RetryEdited).
func (s *Server) editRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /edit", s.editOpen)
	mux.HandleFunc("POST /edit", s.editPost)
}

// Body encodings of the editor: a UTF-8 body is edited as text, any other
// as base64.
const (
	encodingText   = "text"
	encodingBase64 = "b64"
)

// editPage is the editor, the review and the result of an edit.
type editPage struct {
	Queue, Source, ID string
	Fingerprint       string
	ContentType       string
	Encoding          string // encodingText or encodingBase64
	Body, Headers     string // as edited
	Reason            string
	// Review: the copy to be published.
	Parts       string
	CopyHeaders string
	CopyBody    string
	// Result.
	Retried deadletter.Retried
	Error   string
}

func (s *Server) editOpen(w http.ResponseWriter, r *http.Request) {
	if s.refuseReadOnly(w, r) {
		return
	}
	queue, id := r.URL.Query().Get("queue"), r.URL.Query().Get("id")
	source, ok := deadletter.Source(queue)
	if !ok || id == "" {
		s.fail(w, r, http.StatusBadRequest, "Cannot edit that", "Open a message of a dead-letter or parked queue by its id: /edit?queue=orders.new.dlq&id=….")
		return
	}
	var m transport.Message
	err := s.holdToEdit(r.Context(), queue, func(ctx context.Context) (err error) {
		m, err = deadletter.Find(ctx, s.c.Conn, queue, id)
		return err
	})
	if err != nil {
		s.editRefused(w, r, queue, id, err)
		return
	}
	p := editPage{Queue: queue, Source: source, ID: id, Fingerprint: deadletter.Fingerprint(m), ContentType: m.ContentType,
		Headers: deadletter.FormatEditable(deadletter.Editable(m.Headers)), Reason: deadletter.ReasonOf(queue, m).Text}
	p.Encoding, p.Body = encodeBody(m.Body)
	s.render(w, http.StatusOK, "edit", "Edit and retry "+id, p)
}

func (s *Server) editPost(w http.ResponseWriter, r *http.Request) {
	if s.refuseReadOnly(w, r) {
		return
	}
	p := editPage{Queue: r.FormValue("queue"), ID: r.FormValue("id"), Fingerprint: r.FormValue("fingerprint"),
		ContentType: r.FormValue("content_type"), Encoding: r.FormValue("encoding"), Reason: r.FormValue("reason"),
		Body: r.FormValue("body"), Headers: r.FormValue("headers")}
	var ok bool
	if p.Source, ok = deadletter.Source(p.Queue); !ok || p.ID == "" {
		s.fail(w, r, http.StatusBadRequest, "Cannot edit that", "The form names no message of a dead-letter or parked queue.")
		return
	}
	body, err := decodeBody(p.Encoding, p.Body)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, "The body does not read", err.Error())
		return
	}
	e := deadletter.Edit{ID: p.ID, Body: body, Headers: p.Headers, By: s.user(r), Fingerprint: p.Fingerprint, Now: s.c.Now}
	switch r.FormValue("step") {
	case "edit":
		s.render(w, http.StatusOK, "edit", "Edit and retry "+p.ID, p)
	case "review":
		var m transport.Message
		err := s.holdToEdit(r.Context(), p.Queue, func(ctx context.Context) (err error) {
			m, err = deadletter.Find(ctx, s.c.Conn, p.Queue, p.ID)
			return err
		})
		if err == nil && deadletter.Fingerprint(m) != p.Fingerprint {
			err = fmt.Errorf("%s in %s: %w: reopen it and edit it again", p.ID, p.Queue, deadletter.ErrChanged)
		}
		var edited transport.Message
		var parts []string
		if err == nil {
			edited, parts, err = deadletter.EditedCopy(p.Queue, m, e)
		}
		if err != nil {
			s.editRefused(w, r, p.Queue, p.ID, err)
			return
		}
		p.Parts = strings.Join(parts, " and ")
		p.CopyHeaders = deadletter.FormatEditable(edited.Headers)
		_, p.CopyBody = encodeBody(edited.Body)
		s.render(w, http.StatusOK, "editconfirm", "Confirm: retry the edited "+p.ID, p)
	case "retry":
		err = s.holdToEdit(r.Context(), p.Queue, func(ctx context.Context) (err error) {
			p.Retried, err = deadletter.RetryEdited(ctx, s.c.Conn, p.Queue, e)
			return err
		})
		s.snapshots.forget(p.Queue) // the queue changed, or may have
		s.auditEditRetry(r, p, err)
		if err != nil {
			s.editRefused(w, r, p.Queue, p.ID, err)
			return
		}
		s.render(w, http.StatusOK, "edited", "Retried the edited "+p.ID, p)
	default:
		s.fail(w, r, http.StatusBadRequest, "Cannot edit that", "The form has no step: review, edit or retry.")
	}
}

// editRefused says why an edit cannot go on: the message is gone or
// ambiguous, changed, or the edit does not read (the original is where it
// was in every case).
func (s *Server) editRefused(w http.ResponseWriter, r *http.Request, queue, id string, err error) {
	status, title := http.StatusBadGateway, "The retry failed"
	switch {
	case errors.Is(err, deadletter.ErrMessageGone):
		status, title = http.StatusNotFound, "The message is no longer there"
	case errors.Is(err, deadletter.ErrAmbiguousID):
		status, title = http.StatusConflict, "More than one message has that id"
	case errors.Is(err, deadletter.ErrChanged):
		status, title = http.StatusConflict, "The message changed"
	case errors.Is(err, deadletter.ErrBadHeaders), errors.Is(err, deadletter.ErrNothingEdited):
		status, title = http.StatusBadRequest, "Cannot retry that edit"
	case errors.Is(err, transport.ErrNotFound):
		status, title = http.StatusNotFound, "No such queue"
	case errors.Is(err, errLookedAt):
		title = managementFailure(err)
	}
	s.render(w, status, "edited", title, editPage{Queue: queue, ID: id, Error: err.Error()})
}

// user names who is signed in, for acemq-edited-by: the basic-auth user,
// else "" (a token names no one).
func (s *Server) user(r *http.Request) string {
	if u, _, ok := r.BasicAuth(); ok && s.c.User != "" {
		return u
	}
	return ""
}

// auditEditRetry writes the audit line of an edit and retry.
func (s *Server) auditEditRetry(r *http.Request, p editPage, err error) {
	outcome, moved := "ok", 1
	if err != nil {
		outcome, moved = "failed", 0
	}
	attrs := []slog.Attr{slog.String("id", p.ID), slog.String("to", p.Source), slog.Int("moved", moved)}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	s.auditAction(r, "edit-retry", p.Queue, outcome, attrs...)
}

// errLookedAt marks a queue the console could not look at through the
// management API.
var errLookedAt = errors.New("reading it through the management API failed")

// holdToEdit runs fn, which reads queue, once the console may read it (a
// queue a view may read: deadletter.Viewable) and while it holds the
// queue's gate as a job does, so that no view or job holds the message
// being edited meanwhile.
func (s *Server) holdToEdit(ctx context.Context, queue string, fn func(context.Context) error) error {
	q, _, err := admin.ReadQueue(ctx, s.c.Endpoint, queue)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", queue, errLookedAt, err)
	}
	if err := deadletter.Viewable(q); err != nil {
		return fmt.Errorf("the console edits only the queues it can look at: %w", err)
	}
	release, err := s.gates.of(queue).holdForJob(ctx)
	if err != nil {
		return err
	}
	defer release()
	return fn(ctx)
}

// encodeBody is a body for the editor: its text when it is UTF-8, else
// base64.
func encodeBody(b []byte) (encoding, text string) {
	if utf8.Valid(b) {
		return encodingText, string(b)
	}
	return encodingBase64, base64.StdEncoding.EncodeToString(b)
}

// decodeBody reads the editor's body. A browser sends a textarea's line
// ends as CRLF: text is sent on with LF line ends.
func decodeBody(encoding, text string) ([]byte, error) {
	switch encoding {
	case encodingText:
		return []byte(strings.ReplaceAll(text, "\r\n", "\n")), nil
	case encodingBase64:
		b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(text), ""))
		if err != nil {
			return nil, fmt.Errorf("the body is not base64: %w", err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("no body encoding %q: text or base64", encoding)
}

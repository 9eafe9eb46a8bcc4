package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/acemq-go/acemq/admin"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/deadletter"
	"github.com/acemq-go/acemq/transport"
)

// action is what a confirmation and a run are about.
type action struct {
	Op, Queue, To, Match, Upload, UploadName string
	IDs                                      []string
	Token                                    string // a purge's count (counted)
	Count                                    int    // what the dry run found
	What                                     string // what will happen, in words
}

// readAction reads and checks the action of a form: op, queue, the
// selection (id values, or match) and the target.
func (s *Server) readAction(r *http.Request) (action, *deadletter.Matcher, error) {
	op, scope, _ := strings.Cut(r.FormValue("op"), " ")
	a := action{Op: op, Queue: r.FormValue("queue"), Match: r.FormValue("match"), IDs: r.Form["id"], Upload: r.FormValue("upload"), Token: r.FormValue("token")}
	if scope != "selected" {
		a.IDs = nil
	}
	var m *deadletter.Matcher
	switch {
	case scope == "selected" && len(a.IDs) == 0:
		return a, nil, errors.New("no message is selected: tick the messages to act on")
	case scope == "selected":
		m, a.Match = deadletter.MatchIDs(a.IDs...), ""
	default:
		var err error
		if m, err = compile(a.Match); err != nil {
			return a, nil, err
		}
	}
	switch op {
	case "replay":
		if _, ok := deadletter.Source(a.Queue); !ok {
			return a, nil, fmt.Errorf("%s ends in neither .dlq nor .parked, so its source queue is not known", a.Queue)
		}
	case "park":
		if !deadletter.IsDeadLetterQueue(a.Queue) {
			return a, nil, fmt.Errorf("park moves a dead-letter queue (a name ending in .dlq) to its parked queue; %s is not one", a.Queue)
		}
	case "purge":
		if scope == "selected" || a.Match != "" {
			return a, nil, errors.New("purge deletes every message of the queue: it takes no selection and no match expression")
		}
	case "export":
	case "import":
		if _, ok := s.uploads.get(a.Upload); !ok {
			return a, nil, errors.New("the uploaded file is gone (the console restarted, or it was imported already): upload it again")
		}
	default:
		return a, nil, fmt.Errorf("there is no action %q", op)
	}
	if a.Queue == "" {
		return a, nil, errors.New("no queue named")
	}
	if op != "import" { // an import publishes; the others take messages
		q, _, err := admin.ReadQueue(r.Context(), s.c.Endpoint, a.Queue)
		if err == nil {
			err = deadletter.Viewable(q)
		}
		if err != nil {
			return a, nil, fmt.Errorf("the console acts only on the queues it can look at: %w", err)
		}
	}
	return a, m, nil
}

// failAction refuses an action: a queue that is not there is a 404, any
// other reason a 400.
func (s *Server) failAction(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, transport.ErrNotFound) {
		s.failErr(w, r, "No such queue", err)
		return
	}
	s.fail(w, r, http.StatusBadRequest, "Cannot do that", err.Error())
}

// confirm works out what an action would do, with a dry run, and asks.
func (s *Server) confirm(w http.ResponseWriter, r *http.Request) {
	if s.refuseReadOnly(w, r) {
		return
	}
	a, m, err := s.readAction(r)
	if err != nil {
		s.failAction(w, r, err)
		return
	}
	if err := s.count(r.Context(), &a, m); err != nil {
		s.failErr(w, r, "Counting the messages failed", err)
		return
	}
	s.render(w, http.StatusOK, "confirm", "Confirm: "+a.Op+" "+a.Queue, a)
}

// count sets a.Count, by a dry run through the queue (or the file), and
// a.What.
func (s *Server) count(ctx context.Context, a *action, m *deadletter.Matcher) error {
	o := deadletter.Options{Match: m, DryRun: true}
	var (
		p   deadletter.Progress
		err error
	)
	if a.Op != "import" {
		// Counted while the queue is the count's alone: a view of it
		// holding messages would hide them from the count.
		release, err := s.gates.of(a.Queue).holdForJob(ctx)
		if err != nil {
			return err
		}
		defer release()
	}
	switch {
	case a.Op == "purge":
		// What the confirmation counts, by identity, is all the purge
		// may remove.
		var ids map[string]int
		if ids, p.Moved, err = s.countForPurge(ctx, a.Queue); err == nil {
			a.Token = s.counted.add(a.Queue, ids)
		}
	case m == nil && a.Op != "import":
		// Every message: the queue's depth says how many, without a pass
		// through it (whose requeue of every message would slow the move).
		var st transport.QueueState
		if st, err = s.c.Conn.InspectQueue(ctx, a.Queue); err == nil {
			p.Moved = st.Messages
		}
	case a.Op == "import":
		up, _ := s.uploads.get(a.Upload)
		a.UploadName = up.name
		var f *os.File
		if f, err = os.Open(up.path); err == nil {
			p, err = deadletter.Import(ctx, s.c.Conn, f, a.Queue, o)
			f.Close()
		}
	default:
		p, err = deadletter.Export(ctx, s.c.Conn, a.Queue, io.Discard, false, o)
	}
	if err != nil {
		return err
	}
	a.Count = p.Moved
	a.What = describe(*a)
	return nil
}

// describe says what an action will do, to how many messages.
func describe(a action) string {
	n := fmt.Sprintf("%d message%s", a.Count, plural(a.Count))
	which := ""
	switch {
	case len(a.IDs) > 0:
		which = fmt.Sprintf(" (of the %d selected)", len(a.IDs))
	case a.Match != "":
		which = fmt.Sprintf(" matching %s", a.Match)
	}
	switch a.Op {
	case "replay":
		src, _ := deadletter.Source(a.Queue)
		return fmt.Sprintf("Replay %s%s from %s back to %s: attempt 1, x-acemq-error removed, acemq-replayed-from, -at and -count set. Each is confirmed at %s before its original is removed from %s; the first failure stops the replay and leaves the rest where they are.", n, which, a.Queue, src, src, a.Queue)
	case "park":
		src, _ := deadletter.Source(a.Queue)
		return fmt.Sprintf("Park %s%s: move them unchanged from %s to %s. Each is confirmed there before its original is removed; the first failure stops and leaves the rest where they are.", n, which, a.Queue, contract.ParkedQueue(src))
	case "export":
		return fmt.Sprintf("Export %s%s of %s to a file to download. The messages stay in %s.", n, which, a.Queue, a.Queue)
	case "import":
		return fmt.Sprintf("Import %s%s of the file %s into %s, each exactly as exported, mandatory and confirmed; the first the broker does not take stops the import.", n, which, a.UploadName, a.Queue)
	case "purge":
		return fmt.Sprintf("Purge %s: delete the %s counted in it now, for good, each known by its id (or, without one, by its body's digest). Any message that arrives before you confirm stays; one already gone is reported. Export them first to keep a copy. Type the queue's name to confirm.", a.Queue, n)
	}
	return ""
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// refuseReadOnly refuses an action of a read-only console, and says so.
func (s *Server) refuseReadOnly(w http.ResponseWriter, r *http.Request) bool {
	if s.c.ReadOnly {
		s.fail(w, r, http.StatusForbidden, "Read-only", "This console was started with --read-only: it changes no queue.")
	}
	return s.c.ReadOnly
}

// importUpload keeps an uploaded export file and asks to confirm its
// import.
func (s *Server) importUpload(w http.ResponseWriter, r *http.Request) {
	if s.refuseReadOnly(w, r) {
		return
	}
	// secure streamed the file to a temporary file, within Config.MaxImport.
	path, name, ok := uploadedFile(r, true)
	if !ok {
		s.fail(w, r, http.StatusBadRequest, "No file", "Choose an export file (JSON lines, as acemq dlq export writes) to import.")
		return
	}
	id := s.uploads.add(path, name)
	r.Form.Set("upload", id)
	r.Form.Set("op", "import")
	a, m, err := s.readAction(r)
	if err == nil {
		err = s.count(r.Context(), &a, m)
	}
	if err != nil {
		if up, ok := s.uploads.take(id); ok {
			_ = os.Remove(up.path)
		}
		s.fail(w, r, http.StatusBadRequest, "Cannot import that file", err.Error())
		return
	}
	s.render(w, http.StatusOK, "confirm", "Confirm: import into "+a.Queue, a)
}

// run starts a confirmed action as a job and shows it.
func (s *Server) run(w http.ResponseWriter, r *http.Request) {
	if s.refuseReadOnly(w, r) {
		return
	}
	a, m, err := s.readAction(r)
	if err != nil {
		s.failAction(w, r, err)
		return
	}
	confirmed, err := strconv.Atoi(r.FormValue("count"))
	if err != nil || confirmed < 0 {
		s.fail(w, r, http.StatusBadRequest, "Not confirmed", "The action was not confirmed: start it from its confirmation page.")
		return
	}
	a.Count = confirmed
	var purgeIDs map[string]int
	if a.Op == "purge" {
		if r.FormValue("typed") != a.Queue {
			s.fail(w, r, http.StatusBadRequest, "Not confirmed", "To purge "+a.Queue+", type its name in the confirmation.")
			return
		}
		var ok bool
		if purgeIDs, ok = s.counted.take(a.Token, a.Queue); !ok {
			s.fail(w, r, http.StatusGone, "Confirm again", "This purge's confirmation is gone (run already, or the console restarted): start it again from the queue page.")
			return
		}
	}
	j := &job{Op: a.Op, Queue: a.Queue, Back: a.Queue}
	if a.Op == "import" {
		up, ok := s.uploads.take(a.Upload)
		if !ok {
			s.fail(w, r, http.StatusGone, "Already imported", "The uploaded file was imported already: upload it again to import it again.")
			return
		}
		a.UploadName = up.name
		j.file = up.path // removed when the job ends
	}
	j.What = describe(a)
	// No more than confirmed: messages dead-lettered since the
	// confirmation wait for the next run.
	o := deadletter.Options{Match: m, Limit: confirmed, Progress: j.progress, Doubtful: j.addDoubtful}
	if purgeIDs != nil {
		o.Match = deadletter.MatchIdentities(purgeIDs)
	}
	if confirmed == 0 && a.Op != "purge" {
		o.Limit = -1 // nothing to move; see below
	}
	s.jobs.add(j)
	s.auditJobStart(r, j, confirmed)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.runJob(j, a, o)
		s.auditJobEnd(j)
		j.end()
	}()
	http.Redirect(w, r, "/job?id="+j.ID, http.StatusSeeOther)
}

func (s *Server) runJob(j *job, a action, o deadletter.Options) {
	ctx := s.ctx
	var (
		p   deadletter.Progress
		err error
	)
	if o.Limit < 0 {
		j.finish(p, fmt.Sprintf("%s: nothing to %s; nothing changed", a.Queue, a.Op), nil)
		return
	}
	// The job holds the queue: no view of this console holds any of its
	// messages meanwhile (a pass running is stopped), so every message
	// ready is the job's to take.
	release, err := s.gates.of(a.Queue).holdForJob(ctx)
	if err != nil {
		j.finish(p, fmt.Sprintf("%s: stopped before it began", a.Queue), err)
		return
	}
	defer func() {
		release()
		s.snapshots.forget(a.Queue)
		if src, ok := deadletter.Source(a.Queue); ok {
			s.snapshots.forget(contract.ParkedQueue(src))
		}
	}()
	j.begin()
	switch a.Op {
	case "replay":
		p, err = deadletter.Replay(ctx, s.c.Conn, a.Queue, "", o)
	case "park":
		p, err = deadletter.Park(ctx, s.c.Conn, a.Queue, o)
	case "export":
		var f *os.File
		if f, err = os.CreateTemp("", "acemq-console-export-*.jsonl"); err == nil {
			j.mu.Lock()
			j.file, j.fileName = f.Name(), a.Queue+"-"+time.Now().UTC().Format("20060102T150405Z")+".jsonl"
			j.mu.Unlock()
			p, err = deadletter.Export(ctx, s.c.Conn, a.Queue, f, false, o)
			err = errors.Join(err, f.Close())
		}
	case "import":
		var f *os.File
		if f, err = os.Open(j.file); err == nil {
			p, err = deadletter.Import(ctx, s.c.Conn, f, a.Queue, o)
			f.Close()
		}
		_ = os.Remove(j.file)
		j.mu.Lock()
		j.file = ""
		j.mu.Unlock()
	case "purge":
		p, err = deadletter.Purge(ctx, s.c.Conn, a.Queue, o)
	}
	queue := a.Queue
	if a.Op == "import" {
		queue = a.UploadName
	}
	summary := deadletter.Summary(a.Op, queue, false, p)
	if a.Op == "purge" && p.Moved < a.Count {
		summary += fmt.Sprintf("; %d of the %d counted were gone already (moved or removed by someone else)", a.Count-p.Moved, a.Count)
	}
	if a.Op != "import" {
		summary += s.afterwards(a.Queue, p)
	}
	j.finish(p, summary, err)
}

// afterwards says what queue holds once a job that took from it is done,
// so that a report never says "0 left" with messages left: the messages
// ready it did not take (arrived since it began, past the number
// confirmed, or held by a reader outside this console when it began), and
// whether a consumer is attached that may hold more. (The management
// API's count of unacknowledged messages lags by its sampling interval,
// so it would blame the console's own view of a moment ago.)
func (s *Server) afterwards(queue string, p deadletter.Progress) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := s.c.Conn.InspectQueue(ctx, queue)
	if err != nil {
		return fmt.Sprintf("; what %s holds now is not known: %v", queue, err)
	}
	notTaken := max(0, st.Messages-p.Left)
	out := fmt.Sprintf("; %s holds %d ready now", queue, st.Messages)
	if p.Left > 0 {
		out += fmt.Sprintf(" (%d left in place by this job)", min(p.Left, st.Messages))
	}
	if notTaken > 0 {
		out += fmt.Sprintf(", %d of them not taken by this job (arrived since it began, past the number confirmed, or held by another reader when it began)", notTaken)
	}
	if st.Consumers > 0 {
		out += fmt.Sprintf("; %d consumer%s attached to it may hold more", st.Consumers, plural(st.Consumers))
	}
	return out
}

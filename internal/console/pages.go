package console

import (
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/admin"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/deadletter"
	"github.com/acemq-go/acemq/internal/preview"
	"github.com/acemq-go/acemq/topologyfile"
	"github.com/acemq-go/acemq/transport"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// pages are the templates, each page with the layout.
var pages = func() map[string]*template.Template {
	funcs := template.FuncMap{"age": age, "rate": func(r float64) string { return strconv.FormatFloat(r, 'f', 1, 64) + "/s" }}
	out := map[string]*template.Template{}
	names, _ := fs.Glob(templateFiles, "templates/*.html")
	for _, n := range names {
		page := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if page == "layout" {
			continue
		}
		out[page] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", n))
	}
	return out
}()

// defaultLimit is how many messages a queue page shows.
const defaultLimit = 50

func (s *Server) routes() {
	mux := http.NewServeMux()
	static, _ := fs.Sub(staticFiles, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", s.overview)
	mux.HandleFunc("GET /queue", s.queue)
	mux.HandleFunc("POST /confirm", s.confirm)
	mux.HandleFunc("POST /import", s.importUpload)
	mux.HandleFunc("POST /run", s.run)
	mux.HandleFunc("GET /job", s.jobPage)
	mux.HandleFunc("GET /job.json", s.jobJSON)
	mux.HandleFunc("GET /job/download", s.jobDownload)
	mux.HandleFunc("GET /drift", s.drift)
	mux.HandleFunc("POST /drift", s.drift)
	mux.HandleFunc("GET /login", s.login)
	mux.HandleFunc("POST /login", s.login)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, http.StatusNotFound, "Not found", "There is no page "+r.URL.Path+".")
	})
	s.mux = mux
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.secure(s.mux).ServeHTTP(w, r) }

// view is what every page's layout needs.
type view struct {
	Title    string
	Broker   string // the endpoint, never with its password
	ReadOnly bool
	CSRF     string
	Data     any
}

func (s *Server) render(w http.ResponseWriter, status int, page, title string, data any) {
	var b strings.Builder
	err := pages[page].Execute(&b, view{Title: title, Broker: s.c.Endpoint.String(), ReadOnly: s.c.ReadOnly, CSRF: s.csrf, Data: data})
	if err != nil {
		http.Error(w, "rendering the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, b.String())
}

// fail renders the error page with status.
func (s *Server) fail(w http.ResponseWriter, _ *http.Request, status int, title, message string) {
	s.render(w, status, "error", title, struct {
		Status  int
		Message string
	}{status, message})
}

// failErr renders err: an unknown queue is a 404, a broker that does not
// answer a 502.
func (s *Server) failErr(w http.ResponseWriter, r *http.Request, what string, err error) {
	status := http.StatusBadGateway
	if errors.Is(err, transport.ErrNotFound) {
		status = http.StatusNotFound
	}
	s.fail(w, r, status, what, err.Error())
}

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
	names := make([]string, len(state.Queues))
	for i, q := range state.Queues {
		names[i] = q.Name
	}
	l, err := deadletter.List(ctx, s.c.Conn, names, s.c.Now())
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
	s.render(w, http.StatusOK, "overview", "Dead letters", out)
}

// shown is a message on a queue page.
type shown struct {
	ID, Type, Reason, Class, Age, ContentType string
	Attempt, Replays, Bytes                   int
	ReplayedFrom                              string
	Preview                                   preview.Preview
	Problem                                   string // why the body was not read to the end
	Headers, Death                            string
}

// bar is a reason class in the chart.
type bar struct {
	Class string
	Count int
	Width int // of 300
	Y     int
}

type queuePage struct {
	Queue, Source, Match string
	Info                 deadletter.QueueInfo
	Bars                 []bar
	ChartHeight          int
	Reasons              []deadletter.ReasonCount
	Messages             []shown
	Limit, Scanned       int
	CanReplay, CanPark   bool
}

func (s *Server) queue(w http.ResponseWriter, r *http.Request) {
	ctx, name := r.Context(), r.URL.Query().Get("name")
	if name == "" {
		s.fail(w, r, http.StatusBadRequest, "No queue named", "Give the queue: /queue?name=orders.new.dlq.")
		return
	}
	p := queuePage{Queue: name, Match: r.URL.Query().Get("match"), Limit: defaultLimit}
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			s.fail(w, r, http.StatusBadRequest, "Bad limit", fmt.Sprintf("limit must be a number of messages, 1 or more; found %q.", v))
			return
		}
		p.Limit = n
	}
	m, err := compile(p.Match)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, "Bad match expression", err.Error())
		return
	}
	now := s.c.Now()
	if p.Info, err = deadletter.Describe(ctx, s.c.Conn, name, now); err != nil {
		s.failErr(w, r, "No such queue", fmt.Errorf("%s: %w", name, err))
		return
	}
	p.Source, p.CanReplay = deadletter.Source(name)
	p.CanPark = deadletter.IsDeadLetterQueue(name)
	counts, err := deadletter.Reasons(ctx, s.c.Conn, name)
	if err != nil {
		s.failErr(w, r, "Counting the reasons failed", err)
		return
	}
	p.Reasons = counts.Reasons
	most := 1
	for _, c := range counts.Classes {
		most = max(most, c.Count)
	}
	for i, c := range counts.Classes {
		p.Bars = append(p.Bars, bar{Class: cmp.Or(string(c.Class), "(none)"), Count: c.Count, Width: max(1, c.Count*300/most), Y: i * 24})
	}
	p.ChartHeight = len(p.Bars) * 24
	errEnough := errors.New("enough")
	err = deadletter.Browse(ctx, s.c.Conn, name, 0, func(msg transport.Message) error {
		p.Scanned++
		ok, err := m.Match(name, msg, now)
		if err != nil || !ok {
			return err
		}
		p.Messages = append(p.Messages, s.show(ctx, name, msg, now))
		if len(p.Messages) == p.Limit {
			return errEnough
		}
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		s.failErr(w, r, "Reading the messages failed", err)
		return
	}
	s.render(w, http.StatusOK, "queue", name, p)
}

// compile is the match expression, nil for "" (every message).
func compile(expression string) (*deadletter.Matcher, error) {
	if strings.TrimSpace(expression) == "" {
		return nil, nil
	}
	return deadletter.Compile(expression)
}

func (s *Server) show(ctx context.Context, queue string, msg transport.Message, now time.Time) shown {
	e, reason := acemq.ReadEnvelope(msg), deadletter.ReasonOf(queue, msg)
	replayed := deadletter.ReadReplayed(msg.Headers)
	out := shown{ID: e.ID, Type: e.Type, Attempt: e.Attempt, Reason: reason.Text, Class: string(reason.Class),
		Age: age(e.Age(now)), ContentType: msg.ContentType, Bytes: len(msg.Body), Replays: replayed.Count, ReplayedFrom: replayed.From,
		Preview: s.c.Bodies.Body(ctx, msg.ContentType, msg.Body)}
	switch {
	case out.Preview.Err != nil:
		out.Problem = out.Preview.Err.Error()
	case out.Preview.Need != preview.NeedNothing:
		out.Problem = preview.Hint(out.Preview.Need)
	}
	if len(e.Headers) > 0 {
		out.Headers = transport.FormatTable(e.Headers)
	}
	if d, ok := msg.Headers[contract.HeaderDeath]; ok {
		out.Death = transport.FormatTable(transport.Table{contract.HeaderDeath: d})
	}
	return out
}

// age renders an age to the second, "-" when not known.
func age(d time.Duration) string {
	if d < 0 {
		return "-"
	}
	return d.Truncate(time.Second).String()
}

// action is what a confirmation and a run are about.
type action struct {
	Op, Queue, To, Match, Upload, UploadName string
	IDs                                      []string
	Count                                    int    // what the dry run found
	What                                     string // what will happen, in words
}

// readAction reads and checks the action of a form: op, queue, the
// selection (id values, or match) and the target.
func (s *Server) readAction(r *http.Request) (action, *deadletter.Matcher, error) {
	op, scope, _ := strings.Cut(r.FormValue("op"), " ")
	a := action{Op: op, Queue: r.FormValue("queue"), Match: r.FormValue("match"), IDs: r.Form["id"], Upload: r.FormValue("upload")}
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
	return a, m, nil
}

// confirm works out what an action would do, with a dry run, and asks.
func (s *Server) confirm(w http.ResponseWriter, r *http.Request) {
	if s.refuseReadOnly(w, r) {
		return
	}
	a, m, err := s.readAction(r)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, "Cannot do that", err.Error())
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
	switch {
	case a.Op == "purge" || (m == nil && a.Op != "import"):
		// Every message: the queue's depth says how many, without a pass
		// through it (whose requeue of every message would slow the move).
		var st transport.QueueState
		if st, err = s.c.Conn.Transport().InspectQueue(ctx, a.Queue); err == nil {
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
		return fmt.Sprintf("Purge %s: delete the %s ready in it now, for good (and any that arrive before you confirm). Export them first to keep a copy.", a.Queue, n)
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
	f, header, err := r.FormFile("file")
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, "No file", "Choose an export file (JSON lines, as acemq dlq export writes) to import.")
		return
	}
	defer f.Close()
	tmp, err := os.CreateTemp("", "acemq-console-import-*.jsonl")
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, "Cannot keep the file", err.Error())
		return
	}
	if _, err := io.Copy(tmp, f); errors.Join(err, tmp.Close()) != nil {
		_ = os.Remove(tmp.Name())
		s.fail(w, r, http.StatusInternalServerError, "Cannot keep the file", "writing it failed")
		return
	}
	id := s.uploads.add(tmp.Name(), header.Filename)
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
		s.fail(w, r, http.StatusBadRequest, "Cannot do that", err.Error())
		return
	}
	confirmed, err := strconv.Atoi(r.FormValue("count"))
	if err != nil || confirmed < 0 {
		s.fail(w, r, http.StatusBadRequest, "Not confirmed", "The action was not confirmed: start it from its confirmation page.")
		return
	}
	a.Count = confirmed
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
	o := deadletter.Options{Match: m, Limit: confirmed, Progress: j.progress}
	if confirmed == 0 && a.Op != "purge" {
		o.Limit = -1 // nothing to move; see below
	}
	s.jobs.add(j)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.runJob(j, a, o)
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
		var n int
		n, err = s.c.Conn.Transport().PurgeQueue(ctx, a.Queue)
		j.finish(deadletter.Progress{Taken: n, Moved: n}, fmt.Sprintf("purged %s: %d message%s deleted", a.Queue, n, plural(n)), err)
		return
	}
	queue := a.Queue
	if a.Op == "import" {
		queue = a.UploadName
	}
	j.finish(p, deadletter.Summary(a.Op, queue, false, p), err)
}

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
	if f, header, ferr := r.FormFile("file"); ferr == nil {
		defer f.Close()
		p.File = header.Filename
		data, err = io.ReadAll(io.LimitReader(f, 16<<20))
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

// login lets in a browser that gives the token: it sets the session
// cookie (HttpOnly, SameSite=Strict).
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if s.c.Token == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if r.Method == http.MethodPost {
		if equal(r.FormValue("token"), s.c.Token) {
			http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: s.session, Path: "/", HttpOnly: true,
				SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		s.render(w, http.StatusUnauthorized, "login", "Sign in", "That is not the token.")
		return
	}
	s.render(w, http.StatusOK, "login", "Sign in", "")
}

func jsonEncode(w io.Writer, v any) error { return json.NewEncoder(w).Encode(v) }

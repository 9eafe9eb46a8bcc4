package console

import (
	"os"
	"slices"
	"sync"
	"time"

	"github.com/acemq-go/acemq/deadletter"
)

// job is an action running on the server: the page that started it
// follows its progress, and its result stays to be read.
type job struct {
	ID    string
	Op    string // replay, park, purge, export, import
	Queue string // the queue acted on (for an import: the one published to)
	What  string // what the confirmation said would happen
	Back  string // the queue page to go back to
	// Who started it, from where, and how many messages they confirmed
	// (auditJobStart sets them).
	Who, Addr string
	Confirmed int

	mu       sync.Mutex
	p        deadletter.Progress
	done     bool
	err      error
	summary  string
	started  time.Time
	ended    time.Time
	file     string // an export's file, to download
	fileName string
	waiting  bool          // for the queue: a view of it is stopping
	doubtful []string      // the identities of the messages that may be in both places
	blocked  func() string // why the job waits on the broker, if it does
}

// jobState is a job as its page and its JSON show it.
type jobState struct {
	ID       string `json:"id"`
	Op       string `json:"op"`
	Queue    string `json:"queue"`
	What     string `json:"what"`
	Total    int    `json:"total"`
	Taken    int    `json:"taken"`
	Moved    int    `json:"moved"`
	Left     int    `json:"left"`
	Doubtful int    `json:"doubtful"`
	Done     bool   `json:"done"`
	Error    string `json:"error,omitempty"`
	Summary  string `json:"summary,omitempty"`
	Seconds  string `json:"seconds"`
	Download bool   `json:"download"`
	// Waiting: the job waits for the queue (a view's pass is stopping).
	Waiting bool `json:"waiting"`
	// DoubtfulIDs names the messages that may be in both places.
	DoubtfulIDs []string `json:"doubtfulIds,omitempty"`
	// Blocked says why a running job waits on the broker.
	Blocked string `json:"blocked,omitempty"`
	Back    string `json:"-"`
}

func (j *job) progress(p deadletter.Progress) {
	j.mu.Lock()
	j.p = p
	j.mu.Unlock()
}

func (j *job) begin() {
	j.mu.Lock()
	j.waiting = false
	j.mu.Unlock()
}

func (j *job) addDoubtful(identity string) {
	j.mu.Lock()
	j.doubtful = append(j.doubtful, identity)
	j.mu.Unlock()
}

// finish records how the job ended. It shows as done only once end is
// called, after its end is in the audit log: whoever sees it done finds
// the audit line written.
func (j *job) finish(p deadletter.Progress, summary string, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.p, j.summary, j.err, j.ended = p, summary, err, time.Now()
}

func (j *job) end() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.done = true
}

func (j *job) state() jobState {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := jobState{ID: j.ID, Op: j.Op, Queue: j.Queue, What: j.What, Back: j.Back,
		Total: j.p.Total, Taken: j.p.Taken, Moved: j.p.Moved, Left: j.p.Left, Doubtful: j.p.Doubtful,
		Done: j.done, Summary: j.summary, Download: j.done && j.file != "" && j.err == nil,
		Waiting: j.waiting && !j.done, DoubtfulIDs: slices.Clone(j.doubtful)}
	if j.err != nil {
		s.Error = j.err.Error()
	}
	if !j.done && j.blocked != nil {
		s.Blocked = j.blocked()
	}
	end := j.ended
	if !j.done {
		end = time.Now()
	}
	s.Seconds = end.Sub(j.started).Round(10 * time.Millisecond).String()
	return s
}

// jobs are the jobs of this process, by id.
type jobs struct {
	mu      sync.Mutex
	byID    map[string]*job
	blocked func() string // a job's blocked, set by New
}

func newJobs() *jobs { return &jobs{byID: map[string]*job{}} }

func (js *jobs) add(j *job) {
	j.ID, j.started, j.waiting, j.blocked = randomHex()[:16], time.Now(), true, js.blocked
	js.mu.Lock()
	js.byID[j.ID] = j
	js.mu.Unlock()
}

func (js *jobs) get(id string) (*job, bool) {
	js.mu.Lock()
	defer js.mu.Unlock()
	j, ok := js.byID[id]
	return j, ok
}

// list is every job, newest first.
func (js *jobs) list() []*job {
	js.mu.Lock()
	defer js.mu.Unlock()
	out := make([]*job, 0, len(js.byID))
	for _, j := range js.byID {
		out = append(out, j)
	}
	slices.SortFunc(out, func(a, b *job) int { return b.started.Compare(a.started) })
	return out
}

func (js *jobs) removeFiles() {
	js.mu.Lock()
	defer js.mu.Unlock()
	for _, j := range js.byID {
		if j.file != "" {
			_ = os.Remove(j.file)
		}
	}
}

// uploads are the import files received and awaiting their confirmation,
// by id.
type uploads struct {
	mu   sync.Mutex
	byID map[string]upload
}

type upload struct {
	path, name string
}

func newUploads() *uploads { return &uploads{byID: map[string]upload{}} }

func (u *uploads) add(path, name string) string {
	id := randomHex()[:16]
	u.mu.Lock()
	u.byID[id] = upload{path, name}
	u.mu.Unlock()
	return id
}

// take hands over the upload id once: its file is then the caller's.
func (u *uploads) take(id string) (upload, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	up, ok := u.byID[id]
	delete(u.byID, id)
	return up, ok
}

func (u *uploads) get(id string) (upload, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	up, ok := u.byID[id]
	return up, ok
}

func (u *uploads) removeAll() {
	u.mu.Lock()
	defer u.mu.Unlock()
	for id, up := range u.byID {
		_ = os.Remove(up.path)
		delete(u.byID, id)
	}
}

package console

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/acemq-go/acemq/deadletter"
	"github.com/acemq-go/acemq/transport"
)

// What a snapshot keeps of each message, and of how many: the memory
// bound. A message costs its fields (the body's first matchBodyBytes, for
// a filter), its preview (preview.DefaultLimit of text), its headers and
// x-death as text (headerTextBytes each) and a few hundred bytes more: at
// most about 13 KiB, typically 1 to 2 KiB. A snapshot holds at most
// maxSnapshot messages (at most about 1.3 GB in the worst case, some 150
// MB for 100,000 typical dead letters); past that the page says how many
// it did not read.
const (
	matchBodyBytes  = 4096
	headerTextBytes = 4096
	maxSnapshot     = 100_000
)

// entry is a message as a snapshot keeps it.
type entry struct {
	fields   deadletter.Fields // Body cut to matchBodyBytes; Age as of read
	read     time.Time
	identity string
	shown    shown
}

// age is the message's age at now, -1 when not known.
func (e *entry) age(now time.Time) time.Duration {
	if e.fields.Age < 0 {
		return -1
	}
	return e.fields.Age + now.Sub(e.read)
}

// fieldsAt are the entry's fields with the age at now, for a filter.
func (e *entry) fieldsAt(now time.Time) deadletter.Fields {
	f := e.fields
	f.Age = e.age(now)
	return f
}

// snapshot is one pass through a queue, read in order: what its page
// renders from, filters and counts without reading the queue again.
type snapshot struct {
	queue   string
	started time.Time

	mu      sync.Mutex
	total   int // ready when the pass began; -1 before
	entries []entry
	done    bool
	stopped string // why the pass ended before the end, for the page
	err     error
	ended   time.Time
	changed chan struct{} // closed (and replaced) on every change
	// replaced is closed when a newer snapshot of the queue replaces this
	// one (a refresh): its pass, if still running, has no one to serve.
	replaced chan struct{}
}

func newSnapshot(queue string, now time.Time) *snapshot {
	return &snapshot{queue: queue, started: now, total: -1, changed: make(chan struct{}), replaced: make(chan struct{})}
}

func (sn *snapshot) signal() {
	close(sn.changed)
	sn.changed = make(chan struct{})
}

func (sn *snapshot) begin(total int) {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	sn.total = total
	sn.signal()
}

func (sn *snapshot) add(e entry) {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	sn.entries = append(sn.entries, e)
	sn.signal()
}

func (sn *snapshot) finish(stopped string, err error, now time.Time) {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	sn.done, sn.stopped, sn.err, sn.ended = true, stopped, err, now
	sn.signal()
}

// reading is what a snapshot holds at one moment: entries is never changed
// after it is taken (the pass only appends).
type reading struct {
	entries []entry
	total   int
	done    bool
	stopped string
	err     error
	started time.Time
	ended   time.Time
}

func (sn *snapshot) reading() reading {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	return reading{entries: sn.entries[:len(sn.entries):len(sn.entries)], total: sn.total, done: sn.done,
		stopped: sn.stopped, err: sn.err, started: sn.started, ended: sn.ended}
}

// usable says whether a page may render from sn rather than start a new
// pass: it is running, or it read the whole queue.
func (sn *snapshot) usable() bool {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	return !sn.done || (sn.err == nil && sn.stopped == "")
}

// await waits until enough says what was read is enough (or the pass is
// done), or ctx ends, or interrupt is closed: a page answers as soon as
// what it shows is read.
func (sn *snapshot) await(ctx context.Context, interrupt <-chan struct{}, enough func(reading) bool) reading {
	for {
		sn.mu.Lock()
		changed := sn.changed
		sn.mu.Unlock()
		v := sn.reading()
		if v.done || enough(v) {
			return v
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return sn.reading()
		case <-interrupt:
			return sn.reading()
		}
	}
}

// snapshots are the console's snapshots, the latest of each queue.
type snapshots struct {
	mu     sync.Mutex
	byName map[string]*snapshot
}

// current is queue's snapshot to render from, and whether it is new: a
// new one must be started.
func (ss *snapshots) current(queue string, refresh bool, now time.Time) (*snapshot, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.byName == nil {
		ss.byName = map[string]*snapshot{}
	}
	old := ss.byName[queue]
	if old != nil && !refresh && old.usable() {
		return old, false
	}
	if old != nil {
		close(old.replaced)
	}
	sn := newSnapshot(queue, now)
	ss.byName[queue] = sn
	return sn, true
}

// forget drops queue's snapshot: a job changed the queue.
func (ss *snapshots) forget(queue string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if old := ss.byName[queue]; old != nil {
		close(old.replaced)
		delete(ss.byName, queue)
	}
}

// pass reads queue into sn, once the queue's gate lets it: one pass, in
// order, each message handed back (Viewable was checked by the caller).
func (s *Server) pass(sn *snapshot) {
	defer s.wg.Done()
	g := s.gates.of(sn.queue)
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	go func() {
		select {
		case <-sn.replaced: // a newer snapshot serves the pages now
			cancel()
		case <-ctx.Done():
		}
	}()
	pctx, release, err := g.holdForPass(ctx)
	if err != nil {
		sn.finish("", err, s.c.Now())
		return
	}
	defer release()
	st, err := s.c.Conn.InspectQueue(pctx, sn.queue)
	if err == nil {
		sn.begin(st.Messages)
		err = deadletter.Browse(pctx, s.c.Conn, sn.queue, maxSnapshot, func(m transport.Message) error {
			sn.add(s.entryOf(pctx, sn.queue, m))
			return nil
		})
	}
	stopped := ""
	switch {
	case err != nil && ctx.Err() != nil && s.ctx.Err() == nil:
		stopped, err = "a newer view replaced it", nil
	case err != nil && pctx.Err() != nil && s.ctx.Err() == nil:
		stopped, err = "a job took the queue before the pass read it all", nil
	case err == nil && st.Messages > maxSnapshot:
		stopped = fmt.Sprintf("a snapshot holds at most %d messages", maxSnapshot)
	}
	sn.finish(stopped, err, s.c.Now())
}

// entryOf is what a snapshot keeps of m, found in queue.
func (s *Server) entryOf(ctx context.Context, queue string, m transport.Message) entry {
	now := s.c.Now()
	f := deadletter.FieldsOf(queue, m, now)
	if len(f.Body) > matchBodyBytes {
		f.Body = f.Body[:matchBodyBytes]
	}
	sh := s.show(ctx, queue, m, now)
	sh.Headers, sh.Death = cutText(sh.Headers), cutText(sh.Death)
	return entry{fields: f, read: now, identity: deadletter.Identity(m), shown: sh}
}

func cutText(s string) string {
	if len(s) <= headerTextBytes {
		return s
	}
	return s[:headerTextBytes] + "…"
}

package console

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/admin"
	"github.com/acemq-go/acemq/console/preview"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/deadletter"
	"github.com/acemq-go/acemq/transport"
)

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

// group is the messages whose reasons share a template
// (deadletter.ReasonTemplate): one failure, whatever ids it names.
type group struct {
	Template, Example, Class string
	Count                    int
	Match                    string // the expression that selects it
}

type queuePage struct {
	Queue, Source, Match, Type string
	Ready, Consumers           int
	// NotRead says why the messages are not read (deadletter.Viewable):
	// the page then shows the depth alone.
	NotRead     string
	Bars        []bar
	ChartHeight int
	Groups      []group
	Messages    []shown
	// Paging: page numbers from 1; Matching counts the messages read so
	// far that match.
	Page, Size, Matching, First, Last int
	Prev, Next, Refresh               string
	// The snapshot: how far its pass got, how old it is.
	Read, Total        int
	Reading            bool
	Age, Stopped       string
	Oldest             string
	BodyCut            bool // a filter on the body saw only its first bytes
	Busy               bool // a job has the queue: the pass waits for it
	CanReplay, CanPark bool
}

// How long a page waits for its messages to be read before it answers
// with what it has (and says how far the pass got).
const pageWait = 5 * time.Second

// smallRest: a page whose messages are read waits for the rest of the
// pass too when no more than this many are left, so that a small queue's
// counts are whole at once.
const smallRest = 200

// maxPageSize bounds a page, which renders every message it shows.
const maxPageSize = 1000

func (s *Server) queue(w http.ResponseWriter, r *http.Request) {
	ctx, query := r.Context(), r.URL.Query()
	name := query.Get("name")
	if name == "" {
		s.fail(w, r, http.StatusBadRequest, "No queue named", "Give the queue: /queue?name=orders.new.dlq.")
		return
	}
	p := queuePage{Queue: name, Match: query.Get("match"), Page: 1, Size: defaultLimit}
	for _, n := range []struct {
		key  string
		into *int
		max  int
	}{{"page", &p.Page, 1 << 30}, {"size", &p.Size, maxPageSize}, {"limit", &p.Size, maxPageSize}} {
		if v := query.Get(n.key); v != "" {
			i, err := strconv.Atoi(v)
			if err != nil || i < 1 || i > n.max {
				s.fail(w, r, http.StatusBadRequest, "Bad "+n.key, fmt.Sprintf("%s must be a number from 1 to %d; found %q.", n.key, n.max, v))
				return
			}
			*n.into = i
		}
	}
	m, err := compile(p.Match)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, "Bad match expression", err.Error())
		return
	}
	q, _, err := admin.ReadQueue(ctx, s.c.Endpoint, name)
	if err != nil {
		s.failErr(w, r, managementFailure(err), err)
		return
	}
	st, err := s.c.Conn.InspectQueue(ctx, name)
	if err != nil {
		s.failErr(w, r, "No such queue", fmt.Errorf("%s: %w", name, err))
		return
	}
	p.Type, p.Ready, p.Consumers = string(q.Type), st.Messages, st.Consumers
	p.Source, p.CanReplay = deadletter.Source(name)
	p.CanPark = deadletter.IsDeadLetterQueue(name)
	if err := deadletter.Viewable(q); err != nil {
		p.NotRead, p.CanReplay, p.CanPark = err.Error(), false, false
		s.render(w, http.StatusOK, "queue", name, p)
		return
	}
	now := s.c.Now()
	sn, started := s.snapshots.current(name, query.Get("refresh") != "", now)
	if started {
		s.wg.Add(1)
		go s.pass(sn)
	}
	// A job that has the queue, or asks for it, comes first: the page then
	// says so at once, with what was read.
	g := s.gates.of(name)
	arrives := g.jobArrives()
	wait := pageWait
	if g.busy() {
		wait = 0
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	want := p.Page * p.Size
	var matching []int // indexes of the entries matching, as far as looked
	var matchErr error
	looked := 0
	filter := func(v reading) bool {
		for ; looked < len(v.entries) && matchErr == nil; looked++ {
			ok, err := m.MatchFields(v.entries[looked].fieldsAt(now))
			if err != nil {
				matchErr = err
			} else if ok {
				matching = append(matching, looked)
			}
		}
		// A small queue is read to the end first, for its whole counts.
		rest := v.total - len(v.entries)
		return matchErr != nil || len(matching) >= want && v.total >= 0 && rest > smallRest
	}
	v := sn.await(wctx, arrives, filter)
	filter(v)
	p.Busy = g.busy() && !v.done
	if matchErr != nil {
		s.fail(w, r, http.StatusBadRequest, "Bad match expression", matchErr.Error())
		return
	}
	s.fillSnapshot(&p, v, matching, now)
	s.render(w, http.StatusOK, "queue", name, p)
}

// fillSnapshot fills p from what the snapshot has read: the page of the
// matching messages, the counts and groups, how far and how old.
func (s *Server) fillSnapshot(p *queuePage, v reading, matching []int, now time.Time) {
	p.Read, p.Total, p.Reading, p.Stopped = len(v.entries), v.total, !v.done, v.stopped
	if v.err != nil {
		p.Stopped = "reading the queue failed: " + v.err.Error()
	}
	p.Age = age(now.Sub(v.started))
	p.Matching = len(matching)
	from := min((p.Page-1)*p.Size, len(matching))
	to := min(from+p.Size, len(matching))
	for _, i := range matching[from:to] {
		e := &v.entries[i]
		sh := e.shown
		sh.Age = age(e.age(now))
		p.Messages = append(p.Messages, sh)
	}
	p.First, p.Last = from+1, to
	link := func(page int, refresh bool) string {
		q := url.Values{"name": {p.Queue}, "page": {strconv.Itoa(page)}, "size": {strconv.Itoa(p.Size)}}
		if p.Match != "" {
			q.Set("match", p.Match)
		}
		if refresh {
			q.Set("refresh", "1")
		}
		return "/queue?" + q.Encode()
	}
	if p.Page > 1 {
		p.Prev = link(p.Page-1, false)
	}
	if to < len(matching) || (to == from+p.Size && !v.done) {
		p.Next = link(p.Page+1, false)
	}
	p.Refresh = link(1, true)
	if len(v.entries) > 0 {
		p.Oldest = age(v.entries[0].age(now))
	}
	p.BodyCut = p.Match != "" && strings.Contains(p.Match, "body")

	classes, groups := map[string]int{}, map[string]*group{}
	var order []string
	for i := range v.entries {
		f := &v.entries[i].fields
		classes[cmp.Or(f.ReasonClass, "(none)")]++
		g := groups[f.ReasonTemplate]
		if g == nil {
			g = &group{Template: f.ReasonTemplate, Example: f.Reason, Class: f.ReasonClass,
				Match: "reasonTemplate == " + strconv.Quote(f.ReasonTemplate)}
			groups[f.ReasonTemplate] = g
			order = append(order, f.ReasonTemplate)
		}
		g.Count++
	}
	for _, t := range order {
		p.Groups = append(p.Groups, *groups[t])
	}
	slices.SortStableFunc(p.Groups, func(a, b group) int { return cmp.Compare(b.Count, a.Count) })
	var bars []bar
	for c, n := range classes {
		bars = append(bars, bar{Class: c, Count: n})
	}
	slices.SortFunc(bars, func(a, b bar) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Class, b.Class)) })
	most := 1
	for _, b := range bars {
		most = max(most, b.Count)
	}
	for i := range bars {
		bars[i].Width, bars[i].Y = max(1, bars[i].Count*300/most), i*24
	}
	p.Bars, p.ChartHeight = bars, len(bars)*24
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
	if h := withoutDeath(e.Headers); len(h) > 0 {
		out.Headers = transport.FormatTable(h)
	}
	if d, ok := msg.Headers[contract.HeaderDeath]; ok {
		out.Death = deathLines(d)
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

// managementFailure is the title of a page whose read of a queue through
// the management API failed: the queue is not there, or the API did not
// answer (the node down, say).
func managementFailure(err error) string {
	if errors.Is(err, transport.ErrNotFound) {
		return "No such queue"
	}
	return "The management API did not answer"
}

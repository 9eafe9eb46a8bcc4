package console

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/deadletter"
	"github.com/acemq-go/acemq/internal/preview"
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

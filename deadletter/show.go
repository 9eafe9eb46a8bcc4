package deadletter

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
)

// Browse calls visit with the messages of queue in order, at most limit of
// them (0: every one it held at the start), and removes none: they go back
// to their places, which RabbitMQ then marks redelivered. An error from
// visit stops it and is returned.
func Browse(ctx context.Context, c *acemq.Conn, queue string, limit int, visit func(acemq.RawMessage) error) error {
	state, err := c.InspectQueue(ctx, queue)
	if err != nil {
		return fmt.Errorf("browse %s: %w", queue, err)
	}
	n := state.Messages
	if limit > 0 {
		n = min(n, limit)
	}
	taker, err := c.Take(ctx, queue)
	if err != nil {
		return fmt.Errorf("browse %s: %w", queue, err)
	}
	taken := 0
	defer func() { _ = handBack(c, taker, queue, wantBack(state, taken, 0)) }()
	for range n {
		d, ok, err := taker.Next(ctx)
		if err != nil {
			return fmt.Errorf("browse %s: %w", queue, err)
		}
		if !ok {
			return nil
		}
		taken++
		if err := visit(d.Message); err != nil {
			return err
		}
	}
	return nil
}

// ReasonCount is how many messages were set aside for one reason.
type ReasonCount struct {
	Reason
	Count int `json:"count"`
}

// ClassCount is how many messages were set aside for reasons of one class.
type ClassCount struct {
	Class contract.ReasonClass `json:"class"`
	Count int                  `json:"count"`
}

// ReasonCounts are a queue's messages counted by class and by reason, the
// most frequent first, then by class.
type ReasonCounts struct {
	Classes []ClassCount  `json:"classes"`
	Reasons []ReasonCount `json:"reasons"`
}

// Reasons counts the messages of queue by reason (ReasonOf) and by class,
// without removing any.
func Reasons(ctx context.Context, c *acemq.Conn, queue string) (ReasonCounts, error) {
	reasons, classes := map[Reason]int{}, map[contract.ReasonClass]int{}
	err := Browse(ctx, c, queue, 0, func(m acemq.RawMessage) error {
		r := ReasonOf(queue, m)
		reasons[r]++
		classes[r.Class]++
		return nil
	})
	out := ReasonCounts{Classes: make([]ClassCount, 0, len(classes)), Reasons: make([]ReasonCount, 0, len(reasons))}
	for r, n := range reasons {
		out.Reasons = append(out.Reasons, ReasonCount{r, n})
	}
	for c, n := range classes {
		out.Classes = append(out.Classes, ClassCount{c, n})
	}
	slices.SortFunc(out.Reasons, func(a, b ReasonCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Class, b.Class), cmp.Compare(a.Text, b.Text))
	})
	slices.SortFunc(out.Classes, func(a, b ClassCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Class, b.Class))
	})
	return out, err
}

// QueueInfo describes a dead-letter or parked queue.
type QueueInfo struct {
	Name      string `json:"name"`
	Source    string `json:"source"`
	Messages  int    `json:"messages"` // ready
	Consumers int    `json:"consumers"`
	// Oldest is how long ago the message at the head of the queue, its
	// oldest, was first seen (x-acemq-first-seen); acemq.UnknownAge when
	// the queue is empty or the message does not say.
	Oldest time.Duration `json:"-"`
	// HeadClass is the class of the reason the message at the head of the
	// queue was set aside for (ReasonOf); ReasonNone when the queue is
	// empty.
	HeadClass contract.ReasonClass `json:"headReasonClass,omitempty"`
	// NotRead says why the head was not looked at (Viewable): its age and
	// class are then not known. "" when it was, or the queue is empty.
	NotRead string `json:"notRead,omitempty"`
}

// Describe reports on a dead-letter or parked queue q (its type as the
// broker holds it), looking at the message at its head (which goes back to
// its place, marked redelivered) for its age and reason, when Viewable
// allows it; otherwise the depth only, and NotRead says why.
func Describe(ctx context.Context, c *acemq.Conn, q acemq.QueueDeclaration, now time.Time) (QueueInfo, error) {
	queue := q.Name
	source, _ := Source(queue)
	info := QueueInfo{Name: queue, Source: source, Oldest: acemq.UnknownAge}
	state, err := c.InspectQueue(ctx, queue)
	if err != nil {
		return info, fmt.Errorf("describe %s: %w", queue, err)
	}
	info.Messages, info.Consumers = state.Messages, state.Consumers
	if err := Viewable(q); err != nil {
		if info.Messages > 0 {
			info.NotRead = err.Error()
		}
		return info, nil
	}
	err = Browse(ctx, c, queue, 1, func(m acemq.RawMessage) error {
		info.Oldest = acemq.ReadEnvelope(m).Age(now)
		info.HeadClass = ReasonOf(queue, m).Class
		return nil
	})
	return info, err
}

// Listing is where a vhost's messages are set aside or waiting to be tried
// again: its dead-letter and parked queues, and their source queues' rungs.
type Listing struct {
	Queues  []QueueInfo  `json:"queues"`
	Sources []SourceInfo `json:"sources"`
}

// SourceInfo is a source queue's retry rungs, of either kind.
type SourceInfo struct {
	Source string     `json:"source"`
	Rungs  []RungInfo `json:"rungs"` // shortest wait first
	// Waiting adds up the messages ready on the rungs. A message that has
	// expired from an at-least-once rung but that its source queue has not
	// confirmed yet is not ready, so not counted (the management API
	// counts it in the rung's messages_dlx).
	Waiting int `json:"waiting"`
}

// RungInfo is one retry rung and the messages ready on it.
type RungInfo struct {
	Name     string            `json:"name"`
	Kind     contract.RungKind `json:"kind"`
	Delay    string            `json:"delay"` // as the name renders it
	Messages int               `json:"messages"`
}

// List describes every dead-letter and parked queue among queues (a vhost's
// queues with their types, from the management API: admin.Read), in their
// order (Describe: the head of those Viewable only), and
// the rungs among queues, of either kind, of each one's source queue, and
// of each source queue among queues that has rungs but no dead-letter half. A
// queue deleted since its name was listed is left out, as it would be from
// a listing made a moment later: on a busy vhost queues come and go.
func List(ctx context.Context, c *acemq.Conn, queues []acemq.QueueDeclaration, now time.Time) (Listing, error) {
	l := Listing{Queues: []QueueInfo{}, Sources: []SourceInfo{}}
	sources := map[string]*SourceInfo{}
	var order []string
	for _, q := range queues {
		source, ok := Source(q.Name)
		if !ok {
			continue
		}
		info, err := Describe(ctx, c, q, now)
		if errors.Is(err, acemq.ErrNotFound) {
			continue // deleted since the names were listed
		}
		if err != nil {
			return l, err
		}
		l.Queues = append(l.Queues, info)
		if sources[source] == nil {
			sources[source] = &SourceInfo{Source: source, Rungs: []RungInfo{}}
			order = append(order, source)
		}
	}
	// A source with a ladder and no dead-letter half (declared by a library
	// that declares none) is listed too, for its rungs.
	listed := make(map[string]bool, len(queues))
	for _, q := range queues {
		listed[q.Name] = true
	}
	isSource := func(s string) bool { return sources[s] != nil || listed[s] }
	for _, queue := range queues {
		q := queue.Name
		rung, ok := contract.ParseRungName(q, isSource)
		if !ok {
			continue
		}
		if sources[rung.Source] == nil {
			sources[rung.Source] = &SourceInfo{Source: rung.Source, Rungs: []RungInfo{}}
			order = append(order, rung.Source)
		}
		state, err := c.InspectQueue(ctx, q)
		if errors.Is(err, acemq.ErrNotFound) {
			continue
		}
		if err != nil {
			return l, fmt.Errorf("describe %s: %w", q, err)
		}
		s := sources[rung.Source]
		s.Rungs = append(s.Rungs, RungInfo{Name: q, Kind: rung.Kind, Delay: rung.Delay, Messages: state.Messages})
		s.Waiting += state.Messages
	}
	slices.Sort(order)
	for _, source := range order {
		s := sources[source]
		slices.SortFunc(s.Rungs, func(a, b RungInfo) int {
			return cmp.Or(cmp.Compare(rungDelay(a.Delay), rungDelay(b.Delay)), cmp.Compare(a.Name, b.Name))
		})
		l.Sources = append(l.Sources, *s)
	}
	return l, nil
}

// rungDelay reads the delay of a rung's name ("40s", "500ms", "2h"), which
// ParseRungName has checked is Go's syntax too.
func rungDelay(d string) time.Duration {
	v, _ := time.ParseDuration(d)
	return v
}

package deadletter

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/lenient"
	"github.com/acemq-go/acemq/transport"
)

var (
	// ErrMessageGone: no message of a queue has the id asked for (it was
	// replayed, parked or purged meanwhile).
	ErrMessageGone = errors.New("no message has that id now")
	// ErrAmbiguousID: more than one message of a queue has the id, so
	// which one is meant is not known.
	ErrAmbiguousID = errors.New("more than one message has that id")
	// ErrChanged: the message with the id is not the one the edit started
	// from.
	ErrChanged = errors.New("the message changed since it was opened")
	// ErrNothingEdited: the edit changes neither the body nor a header.
	ErrNothingEdited = errors.New("nothing was edited")
	// ErrBadHeaders: the edited headers do not read.
	ErrBadHeaders = errors.New("the headers do not read")
)

// Edit is an operator's edit of one dead letter, to retry.
type Edit struct {
	// ID is the message's id (x-acemq-id, or the AMQP message-id).
	ID string
	// Body is the new body, sent with the message's content type.
	Body []byte
	// Headers are the editable headers as edited, in the form
	// FormatEditable writes: a JSON object. A header left out is removed;
	// one left as it was travels with its exact AMQP type.
	Headers string
	// By names who edited it (acemq-edited-by); "" leaves it out.
	By string
	// Fingerprint is the message's Fingerprint when it was opened: the
	// retry is refused (ErrChanged) when the message is no longer that
	// one. "" skips the check.
	Fingerprint string
	// Now is the clock for acemq-replayed-at and acemq-edited-at; nil is
	// time.Now.
	Now func() time.Time
}

// Retried is what RetryEdited did.
type Retried struct {
	ID     string
	From   string   // the queue the original was removed from
	To     string   // the source queue the edited copy was published to
	Parts  []string // what was edited: contract.EditedBody, EditedHeaders
	Others int      // the other messages taken on the way, all put back
}

// Find returns the message of queue with id, without removing any
// message: every one taken goes back to its place. It fails with
// ErrMessageGone or ErrAmbiguousID when there is not exactly one.
func Find(ctx context.Context, c *acemq.Conn, queue, id string) (acemq.RawMessage, error) {
	h, err := takeByID(ctx, c, queue, id)
	if err != nil {
		return acemq.RawMessage{}, err
	}
	return h.found.Message, h.putBack(0)
}

// RetryEdited retries one message of queue (a Q.dlq or Q.parked) as e
// edits it: the edited copy is published to the source queue as Replay
// publishes (mandatory and confirmed, attempt 1, x-acemq-error removed,
// the replay headers set) with the edit headers (acemq-edited-at, -by,
// acemq-edited, acemq-edit-count, acemq-original-body-sha256), and only
// once the broker has confirmed it is the original removed. The other
// messages taken on the way go back to their places; on any failure the
// original does too.
//
// The broker's dead-lettering history (x-death, x-first-death-*,
// x-last-death-*) and the headers the retry sets are not editable: they
// are kept, or set, as a replay keeps and sets them.
func RetryEdited(ctx context.Context, c *acemq.Conn, queue string, e Edit) (Retried, error) {
	source, ok := Source(queue)
	r := Retried{ID: e.ID, From: queue, To: source}
	if !ok {
		return r, fmt.Errorf("retry %s: %w: its name ends in neither .dlq nor .parked", queue, ErrNoSource)
	}
	if err := mustExist(ctx, c, source); err != nil {
		return r, fmt.Errorf("retry %s: %w", e.ID, err)
	}
	h, err := takeByID(ctx, c, queue, e.ID)
	if err != nil {
		return r, err
	}
	// Putting back returns every message not acknowledged: the others
	// always, the original unless its edited copy is confirmed.
	putBack := sync.OnceValue(func() error { return h.putBack(0) })
	defer func() { _ = putBack() }() // the one set last
	d := h.found
	r.Others = h.others
	if e.Fingerprint != "" && Fingerprint(d.Message) != e.Fingerprint {
		return r, fmt.Errorf("retry %s from %s: %w: reopen it and edit it again", e.ID, queue, ErrChanged)
	}
	edited, parts, err := EditedCopy(queue, d.Message, e)
	if err != nil {
		return r, fmt.Errorf("retry %s from %s: %w", e.ID, queue, err)
	}
	r.Parts = parts
	p, err := c.Republish(ctx, source, edited)
	if err == nil {
		wctx, cancel := context.WithTimeout(ctx, settleTimeout)
		err = p.Wait(wctx)
		cancel()
	}
	switch {
	case refused(err) || errors.Is(err, acemq.ErrNotFound):
		return r, fmt.Errorf("retry %s: %s did not take the edited copy, and the original stays in %s: %w", e.ID, source, queue, err)
	case err != nil:
		return r, fmt.Errorf("retry %s: the edited copy may or may not be in %s (its confirm was lost), and the original stays in %s: %w", e.ID, source, queue, err)
	}
	if err := d.Ack(); err != nil {
		return r, fmt.Errorf("retry %s: the edited copy is in %s, but the original could not be removed from %s, so it is in both: %w", e.ID, source, queue, err)
	}
	putBack = sync.OnceValue(func() error { return h.putBack(1) })
	if err := putBack(); err != nil {
		return r, fmt.Errorf("retry %s: the edited copy is in %s, but the removal of the original from %s was not confirmed (it may be in both): %w", e.ID, source, queue, err)
	}
	return r, nil
}

// EditedCopy is m, a message of queue, edited by e and rewritten as
// RetryEdited publishes it, with the parts edited; it checks the edit as
// RetryEdited does, but takes nothing (for a confirmation to show).
func EditedCopy(queue string, m acemq.RawMessage, e Edit) (acemq.RawMessage, []string, error) {
	before := Editable(m.Headers)
	after, err := parseEditable(e.Headers, before)
	if err != nil {
		return m, nil, err
	}
	if id := acemq.ReadEnvelope(acemq.RawMessage{Headers: after, MessageID: m.MessageID}).ID; id != e.ID {
		return m, nil, fmt.Errorf("%w: the id (%s) cannot be edited: it is what says the copy is the same message", ErrBadHeaders, contract.HeaderID)
	}
	var parts []string
	if !bytes.Equal(e.Body, m.Body) {
		parts = append(parts, contract.EditedBody)
	}
	if FormatEditable(after) != FormatEditable(before) {
		parts = append(parts, contract.EditedHeaders)
	}
	if len(parts) == 0 {
		return m, nil, fmt.Errorf("%w: to retry the message as it is, replay it", ErrNothingEdited)
	}
	now := time.Now
	if e.Now != nil {
		now = e.Now
	}
	h := acemq.Table{}
	for k, v := range m.Headers {
		if !editable(k) {
			h[k] = v // the broker's history, and what the retry sets below
		}
	}
	maps.Copy(h, after)
	at := now()
	h[contract.HeaderAttempt] = int64(1)
	delete(h, contract.HeaderError)
	Replayed{From: queue, At: at, Count: ReadReplayed(m.Headers).Count + 1}.Write(h)
	count, _ := lenient.Int(m.Headers[contract.HeaderEditCount])
	h[contract.HeaderEditCount] = int64(max(count, 0) + 1)
	h[contract.HeaderEditedAt] = at.UTC().Format(contract.ReplayedAtLayout)
	h[contract.HeaderEditedParts] = strings.Join(parts, ",")
	sum := sha256.Sum256(m.Body)
	h[contract.HeaderOriginalBodySHA256] = hex.EncodeToString(sum[:])
	if e.By != "" {
		h[contract.HeaderEditedBy] = e.By
	} else {
		delete(h, contract.HeaderEditedBy)
	}
	m.Headers, m.Body, m.Persistent = h, e.Body, true
	return m, parts, nil
}

// held is what takeByID took: the message with the id, the others taken
// on the way, all unacknowledged.
type held struct {
	taker  acemq.Taker
	found  acemq.RawDelivery
	others int
	// putBack closes the taker, which puts back what it holds (removed of
	// them were acknowledged), and waits until the queue shows them.
	putBack func(removed int) error
}

// takeByID takes the messages of queue as it stands (no more than it held
// at the start) and holds them all, unacknowledged: the one whose id is id
// and the others. It fails, having put them back, when not exactly one has
// the id.
func takeByID(ctx context.Context, c *acemq.Conn, queue, id string) (held, error) {
	var h held
	state, err := c.InspectQueue(ctx, queue)
	if err != nil {
		return h, fmt.Errorf("open %s in %s: %w", id, queue, err)
	}
	if h.taker, err = c.Take(ctx, queue); err != nil {
		return h, fmt.Errorf("open %s in %s: %w", id, queue, err)
	}
	matches, taken := 0, 0
	h.putBack = func(removed int) error { return handBack(c, h.taker, queue, wantBack(state, taken, removed)) }
	for range state.Messages {
		d, ok, err := h.taker.Next(ctx)
		if err != nil {
			_ = h.putBack(0)
			return h, fmt.Errorf("open %s in %s: %w", id, queue, err)
		}
		if !ok {
			break
		}
		taken++
		if id != "" && acemq.ReadEnvelope(d.Message).ID == id {
			if matches++; matches == 1 {
				h.found = d
			}
		}
	}
	switch {
	case matches == 0:
		_ = h.putBack(0)
		return h, fmt.Errorf("open %q in %s: %w (of the %d looked at)", id, queue, ErrMessageGone, taken)
	case matches > 1:
		_ = h.putBack(0)
		return h, fmt.Errorf("open %q in %s: %w: %d of them", id, queue, ErrAmbiguousID, matches)
	}
	h.others = taken - 1
	return h, nil
}

// Fingerprint identifies a message's content (body, content type and
// headers) for ErrChanged: the SHA-256 of them, in hex.
func Fingerprint(m acemq.RawMessage) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d:%s\n%s\n", len(m.ContentType), m.ContentType, transport.FormatTable(m.Headers))
	h.Write(m.Body)
	return hex.EncodeToString(h.Sum(nil))
}

// Editable are the headers of h an edit may change: all but the broker's
// dead-lettering history and the headers a retry sets itself.
func Editable(h acemq.Table) acemq.Table {
	out := acemq.Table{}
	for k, v := range h {
		if editable(k) {
			out[k] = v
		}
	}
	return out
}

// retrySets are the headers a retry sets itself.
var retrySets = []string{contract.HeaderAttempt, contract.HeaderError,
	contract.HeaderReplayedFrom, contract.HeaderReplayedAt, contract.HeaderReplayCount,
	contract.HeaderEditedAt, contract.HeaderEditedBy, contract.HeaderEditedParts, contract.HeaderEditCount, contract.HeaderOriginalBodySHA256}

func editable(name string) bool {
	return !contract.IsDeathHeader(name) && !slices.Contains(retrySets, strings.ToLower(name))
}

// FormatEditable writes headers for a person to edit: a JSON object, one
// header a line, sorted by name. Strings, integers, booleans, decimals,
// nested tables (objects) and arrays are JSON's; bytes are a hex string
// "0x…" and times an RFC 3339 string, which read back as strings if edited.
func FormatEditable(h acemq.Table) string {
	if len(h) == 0 {
		return "{}"
	}
	var b strings.Builder
	b.WriteString("{\n")
	for i, k := range slices.Sorted(maps.Keys(h)) {
		key, _ := json.Marshal(k)
		value, _ := json.Marshal(jsonValue(h[k]))
		fmt.Fprintf(&b, "  %s: %s", key, value)
		if i < len(h)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("}")
	return b.String()
}

// jsonValue is v as JSON writes it (FormatEditable).
func jsonValue(v any) any {
	switch v := v.(type) {
	case acemq.Table:
		return jsonValue(map[string]any(v))
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = jsonValue(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = jsonValue(e)
		}
		return out
	case []byte:
		return fmt.Sprintf("0x%x", v)
	case time.Time:
		return v.UTC().Format(time.RFC3339)
	case nil, string, bool, int, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64:
		return v
	}
	return fmt.Sprint(v)
}

// parseEditable reads text (FormatEditable's form) against the headers it
// was made from: a header whose JSON is as it was keeps its value, and its
// exact AMQP type; a changed or new one is read as JSON (integers as
// int64, other numbers as float64, objects as tables).
func parseEditable(text string, before acemq.Table) (acemq.Table, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(strings.TrimSpace(text)), &raw); err != nil {
		return nil, fmt.Errorf("%w: want a JSON object, one header a line (\"name\": value): %w", ErrBadHeaders, err)
	}
	out := acemq.Table{}
	for k, r := range raw {
		if k == "" {
			return nil, fmt.Errorf("%w: a header has no name", ErrBadHeaders)
		}
		if !editable(k) {
			return nil, fmt.Errorf("%w: %s is not editable: the broker's history stays as it was, and the retry sets the attempt, error, replay and edit headers itself", ErrBadHeaders, k)
		}
		v, err := fromJSON(r)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrBadHeaders, k, err)
		}
		if old, ok := before[k]; ok && sameJSON(old, v) {
			v = old
		}
		out[k] = v
	}
	return out, nil
}

// sameJSON says whether old (a header value) writes as the JSON v reads
// from.
func sameJSON(old, v any) bool {
	a, errA := json.Marshal(jsonValue(old))
	b, errB := json.Marshal(jsonValue(v))
	return errA == nil && errB == nil && bytes.Equal(a, b)
}

// fromJSON reads one header value of JSON: no null, which AMQP tables
// have no use for (the contract writes absent as absent).
func fromJSON(r json.RawMessage) (any, error) {
	d := json.NewDecoder(bytes.NewReader(r))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return table(v)
}

func table(v any) (any, error) {
	switch v := v.(type) {
	case nil:
		return nil, errors.New("null is not a header value: remove the line to remove the header")
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return n, nil
		}
		return v.Float64()
	case map[string]any:
		out := acemq.Table{}
		for k, e := range v {
			t, err := table(e)
			if err != nil {
				return nil, err
			}
			out[k] = t
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			t, err := table(e)
			if err != nil {
				return nil, err
			}
			out[i] = t
		}
		return out, nil
	}
	return v, nil
}

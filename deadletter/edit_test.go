package deadletter_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/deadletter"
	"github.com/acemq-go/acemq/internal/testing/deliverytest"
	"github.com/acemq-go/acemq/transport"
)

// edit is an edit of deadLetter(i): its body and tenant header changed,
// its n header (an int32) left as it was.
func edit(t *testing.T, m transport.Message) deadletter.Edit {
	t.Helper()
	text := deadletter.FormatEditable(deadletter.Editable(m.Headers))
	if strings.Contains(text, contract.HeaderError) || strings.Contains(text, contract.HeaderAttempt) {
		t.Fatalf("the editable headers hold what the retry sets:\n%s", text)
	}
	return deadletter.Edit{
		ID:          acemq.ReadEnvelope(m).ID,
		Body:        []byte(`{"n":2,"fixed":true}`),
		Headers:     strings.Replace(text, `"tenant": "acme"`, `"tenant": "acme-eu",`+"\n"+`  "note": "fixed by hand"`, 1),
		By:          "ops@example",
		Fingerprint: deadletter.Fingerprint(m),
		Now:         fixedClock,
	}
}

func TestRetryEdited(t *testing.T) {
	eachBroker(t, func(t *testing.T, b broker) {
		conn := b.connect(t, "")
		tr := conn.Transport()
		source, dlq, _ := queues(t, b, tr)
		sent := deadLetters(5)
		sent[2].Headers[contract.HeaderDeath] = []any{transport.Table{"queue": source, "reason": "rejected", "count": int64(1)}}
		publish(t, tr, dlq, sent...)

		opened, err := deadletter.Find(t.Context(), conn, dlq, "id-00002")
		if err != nil {
			t.Fatal(err)
		}
		if n := depth(t, tr, dlq); n != 5 {
			t.Fatalf("Find left %d messages in %s, want 5", n, dlq)
		}
		r, err := deadletter.RetryEdited(t.Context(), conn, dlq, edit(t, opened))
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{contract.EditedBody, contract.EditedHeaders}; !reflect.DeepEqual(r.Parts, want) || r.To != source || r.Others != 4 {
			t.Errorf("retried %+v, want parts %v to %s with 4 others", r, want, source)
		}
		got := deliverytest.TakeAll(t, tr, source)
		if len(got) != 1 {
			t.Fatalf("%d messages in %s, want the edited one", len(got), source)
		}
		want := sent[2]
		want.Body = []byte(`{"n":2,"fixed":true}`)
		delete(want.Headers, contract.HeaderError)
		want.Headers["tenant"] = "acme-eu"
		want.Headers["note"] = "fixed by hand"
		want.Headers[contract.HeaderAttempt] = int64(1)
		want.Headers[contract.HeaderReplayedFrom] = dlq
		want.Headers[contract.HeaderReplayedAt] = "2026-11-30T09:15:30.123Z"
		want.Headers[contract.HeaderReplayCount] = int64(1)
		want.Headers[contract.HeaderEditedAt] = "2026-11-30T09:15:30.123Z"
		want.Headers[contract.HeaderEditedBy] = "ops@example"
		want.Headers[contract.HeaderEditedParts] = "body,headers"
		want.Headers[contract.HeaderEditCount] = int64(1)
		want.Headers[contract.HeaderOriginalBodySHA256] = sha256hex(sent[2].Body)
		if !reflect.DeepEqual(got[0], want) {
			t.Errorf("edited copy\n%+v\nwant\n%+v", got[0], want)
		}
		// The others are back, in order; the original is gone.
		if left := ids(peekAll(t, conn, dlq)); !reflect.DeepEqual(left, []string{"id-00000", "id-00001", "id-00003", "id-00004"}) {
			t.Errorf("%s holds %v, want the four others in order", dlq, left)
		}
	})
}

func TestRetryEditedRefuses(t *testing.T) {
	eachBroker(t, func(t *testing.T, b broker) {
		conn := b.connect(t, "")
		tr := conn.Transport()
		_, dlq, _ := queues(t, b, tr)
		sent := deadLetters(3)
		twin := deadLetter(1)
		twin.Body = []byte(`{"twin":true}`)
		publish(t, tr, dlq, append(sent, twin)...)
		e := edit(t, sent[0])

		cases := []struct {
			name string
			edit func(deadletter.Edit) deadletter.Edit
			want error
		}{
			{"gone", func(e deadletter.Edit) deadletter.Edit { e.ID = "id-99999"; return e }, deadletter.ErrMessageGone},
			{"ambiguous", func(e deadletter.Edit) deadletter.Edit { e.ID = "id-00001"; return e }, deadletter.ErrAmbiguousID},
			{"changed", func(e deadletter.Edit) deadletter.Edit { e.Fingerprint = deadletter.Fingerprint(sent[2]); return e }, deadletter.ErrChanged},
			{"nothing", func(e deadletter.Edit) deadletter.Edit {
				e.Body, e.Headers = sent[0].Body, deadletter.FormatEditable(deadletter.Editable(sent[0].Headers))
				return e
			}, deadletter.ErrNothingEdited},
			{"not json", func(e deadletter.Edit) deadletter.Edit { e.Headers = "tenant: acme"; return e }, deadletter.ErrBadHeaders},
			{"history", func(e deadletter.Edit) deadletter.Edit { e.Headers = `{"x-death": []}`; return e }, deadletter.ErrBadHeaders},
			{"id", func(e deadletter.Edit) deadletter.Edit {
				e.Headers = strings.Replace(e.Headers, `"id-00000"`, `"id-new"`, 1)
				return e
			}, deadletter.ErrBadHeaders},
		}
		for _, c := range cases {
			_, err := deadletter.RetryEdited(t.Context(), conn, dlq, c.edit(e))
			if !errors.Is(err, c.want) {
				t.Errorf("%s: %v, want %v", c.name, err, c.want)
			}
		}
		// Every refusal put every message back, in order.
		if left := ids(peekAll(t, conn, dlq)); !reflect.DeepEqual(left, []string{"id-00000", "id-00001", "id-00002", "id-00001"}) {
			t.Errorf("%s holds %v after the refusals, want all four in order", dlq, left)
		}
	})
}

func sha256hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// A source queue that refuses the edited copy (full, rejecting publishes):
// the original stays, and so do the others.
func TestRetryEditedKeepsTheOriginalWhenTheCopyIsRefused(t *testing.T) {
	eachBroker(t, func(t *testing.T, b broker) {
		conn := b.connect(t, "")
		tr := conn.Transport()
		source, dlq, _ := queues(t, b, tr)
		if _, err := tr.DeleteQueue(t.Context(), source); err != nil {
			t.Fatal(err)
		}
		full := transport.Queue{Name: source, Type: transport.Classic, Durable: true,
			Arguments: transport.Table{contract.ArgMaxLength: int64(0), contract.ArgOverflow: contract.OverflowRejectPublish}}
		if err := tr.DeclareQueue(t.Context(), full); err != nil {
			t.Fatal(err)
		}
		sent := deadLetters(2)
		publish(t, tr, dlq, sent...)
		_, err := deadletter.RetryEdited(t.Context(), conn, dlq, edit(t, sent[1]))
		if !errors.Is(err, transport.ErrRefused) {
			t.Errorf("retry into a full source: %v, want ErrRefused", err)
		}
		if left := ids(peekAll(t, conn, dlq)); !reflect.DeepEqual(left, []string{"id-00000", "id-00001"}) {
			t.Errorf("%s holds %v, want both originals in order", dlq, left)
		}
	})
}

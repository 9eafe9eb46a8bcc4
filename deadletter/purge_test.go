package deadletter_test

import (
	"slices"
	"testing"

	"github.com/acemq-go/acemq/deadletter"
	"github.com/acemq-go/acemq/internal/testing/deliverytest"
	"github.com/acemq-go/acemq/transport"
)

// A purge of what was counted removes those messages and no other: one
// without an id is known by its body, and a second copy of a counted id
// that arrived since stays, as does a message that arrived since.
func TestPurgeRemovesWhatWasCounted(t *testing.T) {
	eachBroker(t, func(t *testing.T, b broker) {
		conn := b.connect(t, "purge-counted")
		tr := conn.Transport()
		_, dlq, _ := queues(t, b, tr)
		noID := transport.Message{ContentType: "text/plain", Body: []byte("who am I"), Persistent: true}
		publish(t, tr, dlq, append(deadLetters(4), noID)...)
		counted := map[string]int{}
		if err := deadletter.Browse(t.Context(), conn, dlq, 0, func(m transport.Message) error {
			counted[deadletter.Identity(m)]++
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		// Since the count: a copy of id-00001, and a newcomer.
		publish(t, tr, dlq, deadLetter(1), deadLetter(9))
		p, err := deadletter.Purge(t.Context(), conn, dlq, deadletter.Options{Match: deadletter.MatchIdentities(counted)})
		if err != nil {
			t.Fatal(err)
		}
		if want := (deadletter.Progress{Total: 7, Taken: 7, Moved: 5, Left: 2}); p != want {
			t.Errorf("Purge = %+v, want %+v", p, want)
		}
		if got := ids(deliverytest.TakeAll(t, tr, dlq)); !slices.Equal(got, []string{"id-00001", "id-00009"}) {
			t.Errorf("%s holds %v, want the copy of id-00001 and id-00009", dlq, got)
		}
	})
}

func TestIdentity(t *testing.T) {
	a := transport.Message{ContentType: "text/plain", Body: []byte("x")}
	b := transport.Message{ContentType: "application/json", Body: []byte("x")}
	again := transport.Message{ContentType: "text/plain", Body: []byte("x"), Headers: transport.Table{"tenant": "acme"}}
	if deadletter.Identity(a) == deadletter.Identity(b) || deadletter.Identity(a) != deadletter.Identity(again) {
		t.Errorf("identities %q and %q", deadletter.Identity(a), deadletter.Identity(b))
	}
	if got := deadletter.Identity(deadLetter(3)); got != "id-00003" {
		t.Errorf("Identity = %q, want the id", got)
	}
}

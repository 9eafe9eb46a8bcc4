package acemqprom_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqprom"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/internal/testing/testclock"
	"github.com/acemq-go/acemq/outbox"
	"github.com/acemq-go/acemq/outbox/sqlstore"
	"github.com/acemq-go/acemq/outbox/sqlstore/sqlite"
	"github.com/acemq-go/acemq/transport"
)

// anOutbox is an outbox in a SQLite file of the test's own, on a clock the
// test moves, and a relay named name of it publishing through conn.
func anOutbox(t *testing.T, conn *acemq.Conn, name string) (*sqlstore.Store, *outbox.Relay, *testclock.Clock) {
	t.Helper()
	c := testclock.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "outbox.db"), sqlstore.WithClock(c.Now))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	r, err := outbox.NewRelay(s, conn, outbox.WithName(name))
	if err != nil {
		t.Fatal(err)
	}
	return s, r, c
}

// record writes one record, in a transaction of its own.
func record(t *testing.T, s *sqlstore.Store, exchange, key string) {
	t.Helper()
	err := inTx(t.Context(), s.DB(), func(tx *sql.Tx) error {
		_, err := s.Write(t.Context(), tx, outbox.Message{Exchange: exchange, RoutingKey: key, Body: "a record"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func inTx(ctx context.Context, db *sql.DB, f func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := f(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// relayOnce runs one batch of r and fails t unless it came to want.
func relayOnce(t *testing.T, r *outbox.Relay, want outbox.Batch) {
	t.Helper()
	if got, err := r.Once(t.Context()); err != nil || got != want {
		t.Fatalf("a batch of %s came to %+v (%v), want %+v", r.Name(), got, err, want)
	}
}

// publishedAndFailed has r publish one record to queue and fail one to an
// exchange that does not exist (counted), the failed one written wait
// before the scrape: the lag.
func publishedAndFailed(t *testing.T, s *sqlstore.Store, r *outbox.Relay, c *testclock.Clock, queue string, wait time.Duration) {
	t.Helper()
	record(t, s, "", queue)
	relayOnce(t, r, outbox.Batch{Claimed: 1, Published: 1})
	record(t, s, "no-such-exchange", "x")
	relayOnce(t, r, outbox.Batch{Claimed: 1, Failed: 1})
	c.Advance(wait)
}

// scrapeHolds scrapes g once: the relays are read at the scrape, so there
// is nothing to wait for (and each scrape counts its own failures).
func scrapeHolds(t *testing.T, g prometheus.Gatherer, what string, c check) {
	t.Helper()
	if diff := c(sample(t, g)); diff != "" {
		t.Fatalf("%s:\n%s", what, diff)
	}
}

// TestOutboxMetrics scrapes the relays watched: their publishes summed by
// the family's outcome words, a failure the broker never answered counted
// as failed too; the lag the oldest unpublished record of their tables; a
// table that cannot be read left out of the lag and counted.
func TestOutboxMetrics(t *testing.T) {
	reg, m := newMetrics(t)
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t, acemq.WithObserver(m))
	if err := conn.Transport().DeclareQueue(t.Context(), transport.Queue{Name: "orders", Type: transport.Classic, Durable: true}); err != nil {
		t.Fatal(err)
	}
	for name := range sample(t, reg) {
		if strings.HasPrefix(name, "acemq_outbox") {
			t.Errorf("%s is scraped before any relay is watched", name)
		}
	}

	orders, ordersRelay, ordersClock := anOutbox(t, conn, "orders-relay")
	watch(t, m, ordersRelay)
	watch(t, m, ordersRelay) // once is enough
	publishedAndFailed(t, orders, ordersRelay, ordersClock, "orders", 90*time.Second)
	scrapeHolds(t, reg, "one relay", including(map[string]float64{
		series("outbox_total", "outcome", "published"): 1,
		series("outbox_total", "outcome", "failed"):    1,
		series("outbox_lag_seconds"):                   90,
	}))

	// A second relay, of another table, whose Conn is closed: its publish
	// is never answered, and it is counted failed. Its record is younger
	// than the first table's oldest, which stays the lag.
	closed := b.Connect(t)
	billing, billingRelay, billingClock := anOutbox(t, closed, "billing-relay")
	watch(t, m, billingRelay)
	closed.Close()
	record(t, billing, "", "orders")
	relayOnce(t, billingRelay, outbox.Batch{Claimed: 1, Failed: 1})
	if st := billingRelay.Stats(); st.Unanswered != 1 || st.Failed != 0 {
		t.Fatalf("the publish on a closed Conn: %+v, want one unanswered", st)
	}
	billingClock.Advance(time.Second)
	scrapeHolds(t, reg, "two relays", including(map[string]float64{
		series("outbox_total", "outcome", "published"): 1,
		series("outbox_total", "outcome", "failed"):    2,
		series("outbox_lag_seconds"):                   90,
	}))

	// The first table closed: its lag cannot be read, and is counted; the
	// lag is the second's.
	orders.Close()
	scrapeHolds(t, reg, "a table unreadable", including(map[string]float64{
		series("outbox_total", "outcome", "failed"):                           2,
		series("outbox_lag_seconds"):                                          1,
		series("inspect_errors_total", "queue", "", "target", "orders-relay"): 1,
	}))
	// Neither readable: no lag rather than a lag of 0.
	billing.Close()
	got := sample(t, reg)
	if v, ok := got[series("outbox_lag_seconds")]; ok {
		t.Errorf("with no table readable the lag is %v, want no series", v)
	}
	if got[series("outbox_total", "outcome", "published")] != 1 {
		t.Errorf("the counts went with the tables: %v", got)
	}
}

func watch(t *testing.T, m *acemqprom.Metrics, r acemqprom.OutboxRelay) {
	t.Helper()
	if err := m.WatchOutbox(r); err != nil {
		t.Fatal(err)
	}
}

// A relay WatchOutbox could not read at a scrape is its error at once.
func TestWatchOutboxBadInput(t *testing.T) {
	_, m := newMetrics(t)
	var none *outbox.Relay
	for _, c := range []struct {
		name  string
		relay acemqprom.OutboxRelay
		want  string
	}{
		{"no relay", nil, "not nil"},
		{"a nil *outbox.Relay", none, "not a nil *outbox.Relay"},
		{"a relay that cannot be compared", uncomparable{}, "it can compare"},
	} {
		if err := m.WatchOutbox(c.relay); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error saying %q", c.name, err, c.want)
		}
	}
}

// uncomparable is an OutboxRelay value holding a slice.
type uncomparable struct{ _ []int }

func (uncomparable) Name() string                                         { return "uncomparable" }
func (uncomparable) Publishes() (int64, int64)                            { return 0, 0 }
func (uncomparable) OldestPending(context.Context) (time.Duration, error) { return 0, nil }

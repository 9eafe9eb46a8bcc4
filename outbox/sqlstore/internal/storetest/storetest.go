// Package storetest is the contract of the outbox's SQL store as one suite,
// run on every database: SQLite and PostgreSQL.
package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/testing/testclock"
	"github.com/acemq-go/acemq/outbox"
	"github.com/acemq-go/acemq/outbox/sqlstore"
	"github.com/acemq-go/acemq/transport"
)

// Target is a database under test.
type Target struct {
	// New returns a function opening the store for the test: each call a
	// store of its own (its own pool of connections) on the same table,
	// all on clock.
	New func(t *testing.T, clock func() time.Time) (open func() *sqlstore.Store)
}

const lease = time.Minute

// Run runs every test of the suite on target.
func Run(t *testing.T, target Target) {
	tests := []struct {
		name string
		run  func(t *testing.T, open func() *sqlstore.Store, clock *testclock.Clock)
	}{
		{"WrittenInTheTransaction", writtenInTheTransaction},
		{"AnyBodyAndHeaders", anyBodyAndHeaders},
		{"LeaseGivesARecordToOneOwner", leaseGivesARecordToOneOwner},
		{"PublishedIsNotOffered", publishedIsNotOffered},
		{"FailuresCountedAndGivenUp", failuresCountedAndGivenUp},
		{"Release", release},
		{"Ordered", ordered},
		{"Lag", lag},
		{"Prune", prune},
		{"BadRowsAreRecordsWithAnError", badRows},
		{"ConcurrentClaims", concurrentClaims},
		{"Invalid", invalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Milliseconds: what SQLite keeps of a time.
			clock := testclock.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
			tt.run(t, target.New(t, clock.Now), clock)
		})
	}
}

// write writes m in a transaction of its own and commits it.
func write(t *testing.T, s *sqlstore.Store, m outbox.Message) int64 {
	t.Helper()
	tx, err := s.DB().BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.Write(t.Context(), tx, m)
	if err != nil {
		tx.Rollback()
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return id
}

func writeN(t *testing.T, s *sqlstore.Store, n int) []int64 {
	t.Helper()
	var ids []int64
	for i := range n {
		ids = append(ids, write(t, s, outbox.Message{Exchange: "orders", RoutingKey: "order.new", Body: map[string]int{"n": i}}))
	}
	return ids
}

func claim(t *testing.T, s *sqlstore.Store, owner string, limit int, ordered bool) []outbox.Record {
	t.Helper()
	recs, err := s.Claim(t.Context(), outbox.Claim{Owner: owner, Limit: limit, Lease: lease, MaxAttempts: contract.OutboxMaxAttempts, Ordered: ordered})
	if err != nil {
		t.Fatalf("Claim by %s: %v", owner, err)
	}
	return recs
}

func recordIDs(recs []outbox.Record) []int64 {
	var out []int64
	for _, r := range recs {
		out = append(out, r.ID)
	}
	return out
}

func wantIDs(t *testing.T, what string, recs []outbox.Record, want ...int64) {
	t.Helper()
	if got := recordIDs(recs); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s claimed %v; want %v", what, got, want)
	}
}

// A record written in a transaction is offered once it commits, never when
// it rolls back, and carries the envelope a Publisher writes.
func writtenInTheTransaction(t *testing.T, open func() *sqlstore.Store, clock *testclock.Clock) {
	s := open()
	tx, err := s.DB().BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(t.Context(), tx, outbox.Message{Exchange: "orders", RoutingKey: "order.new", Body: "lost"}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if recs := claim(t, s, "a", 10, false); len(recs) != 0 {
		t.Fatalf("a rolled-back record was offered: %v", recordIDs(recs))
	}
	id := write(t, s, outbox.Message{Exchange: "orders", RoutingKey: "order.new", Body: map[string]string{"id": "o-1"},
		Options: []acemq.MessageOption{acemq.WithMessageID("m-1"), acemq.WithCausation("c-1"), acemq.WithHeaders(transport.Table{"tenant": "t1"})}})
	recs := claim(t, s, "a", 10, false)
	wantIDs(t, "a", recs, id)
	r := recs[0]
	if r.Err != nil || r.Exchange != "orders" || r.RoutingKey != "order.new" || r.Attempts != 0 || !r.CreatedAt.Equal(clock.Now()) {
		t.Fatalf("record %+v", r)
	}
	m := r.Message
	if string(m.Body) != `{"id":"o-1"}` || m.ContentType != contract.ContentTypeJSON || m.MessageID != "m-1" || !m.Persistent {
		t.Errorf("message %+v", m)
	}
	env := acemq.ReadEnvelope(m)
	if env.ID != "m-1" || env.Type != "order.new" || env.Version != 1 || env.Correlation != "m-1" || env.Causation != "c-1" ||
		env.Attempt != 1 || !env.FirstSeen.Equal(clock.Now()) || env.Origin == "" || env.Headers["tenant"] != "t1" {
		t.Errorf("envelope %+v", env)
	}
}

// Any body is kept, byte for byte, and header values keep their types.
func anyBodyAndHeaders(t *testing.T, open func() *sqlstore.Store, _ *testclock.Clock) {
	s := open()
	bodies := [][]byte{nil, []byte("plain text, ünïcödé"), {0, 1, 2, 0xff}, []byte("nul\x00inside"), {0xc3, 0x28}}
	headers := transport.Table{"s": "x", "i": int64(-42), "big": int64(1) << 60, "f": 1.5, "b": true,
		"nested": transport.Table{"k": "v", "n": int64(7)}, "list": []any{"a", int64(1)}}
	for _, body := range bodies {
		write(t, s, outbox.Message{Exchange: "x", RoutingKey: "k", Body: body, Options: []acemq.MessageOption{acemq.WithHeaders(headers)}})
	}
	recs := claim(t, s, "a", 10, false)
	if len(recs) != len(bodies) {
		t.Fatalf("claimed %d of %d", len(recs), len(bodies))
	}
	for i, r := range recs {
		if r.Err != nil {
			t.Fatalf("record %d: %v", r.ID, r.Err)
		}
		if !bytes.Equal(r.Message.Body, bodies[i]) && !(len(bodies[i]) == 0 && len(r.Message.Body) == 0) {
			t.Errorf("body %q came back as %q", bodies[i], r.Message.Body)
		}
		if r.Message.ContentType != contract.ContentTypeBytes {
			t.Errorf("content type %q", r.Message.ContentType)
		}
		for k, v := range headers {
			if fmt.Sprintf("%#v", r.Message.Headers[k]) != fmt.Sprintf("%#v", v) {
				t.Errorf("header %s = %#v; want %#v", k, r.Message.Headers[k], v)
			}
		}
	}
}

// A claimed record is not offered to another owner until its lease ends;
// then it is, and each batch is in id order.
func leaseGivesARecordToOneOwner(t *testing.T, open func() *sqlstore.Store, clock *testclock.Clock) {
	a, b := open(), open()
	ids := writeN(t, a, 5)
	wantIDs(t, "a", claim(t, a, "a", 3, false), ids[:3]...)
	wantIDs(t, "b", claim(t, b, "b", 10, false), ids[3:]...)
	if recs := claim(t, b, "b", 10, false); len(recs) != 0 {
		t.Fatalf("leased records offered again: %v", recordIDs(recs))
	}
	clock.Advance(lease - time.Millisecond)
	if recs := claim(t, b, "c", 10, false); len(recs) != 0 {
		t.Fatalf("records offered before their lease ended: %v", recordIDs(recs))
	}
	clock.Advance(time.Millisecond)
	wantIDs(t, "c after the leases", claim(t, b, "c", 10, false), ids...)
	// a, its lease taken over, reports a failure: c's lease stands, and
	// nothing is counted.
	if err := a.Failed(t.Context(), outbox.Failure{ID: ids[0], Owner: "a", Error: "late", Counted: true}); err != nil {
		t.Fatal(err)
	}
	if recs := claim(t, b, "d", 10, false); len(recs) != 0 {
		t.Fatalf("a stale failure cleared another owner's lease: %v offered", recordIDs(recs))
	}
	var attempts int
	if err := a.DB().QueryRowContext(t.Context(), "SELECT attempts FROM "+a.Table()+" WHERE id = "+strconv.FormatInt(ids[0], 10)).Scan(&attempts); err != nil {
		t.Fatal(err)
	}
	if attempts != 0 {
		t.Fatalf("a stale failure was counted: attempts = %d", attempts)
	}
}

func publishedIsNotOffered(t *testing.T, open func() *sqlstore.Store, clock *testclock.Clock) {
	s := open()
	ids := writeN(t, s, 3)
	claim(t, s, "a", 10, false)
	if err := s.Published(t.Context(), ids[:2]); err != nil {
		t.Fatal(err)
	}
	// Marking again is harmless.
	if err := s.Published(t.Context(), ids[:1]); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * lease)
	wantIDs(t, "after the lease", claim(t, s, "b", 10, false), ids[2])
	var published int
	if err := s.DB().QueryRowContext(t.Context(), "SELECT COUNT(*) FROM "+s.Table()+" WHERE published_at IS NOT NULL AND locked_by IS NULL").Scan(&published); err != nil {
		t.Fatal(err)
	}
	if published != 2 {
		t.Errorf("%d rows published and unlocked; want 2", published)
	}
}

// A counted failure adds an attempt and keeps its error; an uncounted one
// keeps only the error; either waits out its retry delay; after
// MaxAttempts counted failures the record is given up.
func failuresCountedAndGivenUp(t *testing.T, open func() *sqlstore.Store, clock *testclock.Clock) {
	s := open()
	id := writeN(t, s, 1)[0]
	long := strings.Repeat("é", 3*contract.OutboxMaxError)
	fail := func(counted bool, text string) {
		t.Helper()
		wantIDs(t, "a", claim(t, s, "a", 1, false), id)
		if err := s.Failed(t.Context(), outbox.Failure{ID: id, Owner: "a", Error: text, Counted: counted, RetryDelay: time.Second}); err != nil {
			t.Fatal(err)
		}
		if recs := claim(t, s, "a", 1, false); len(recs) != 0 {
			t.Fatal("a failed record was offered before its retry delay")
		}
		clock.Advance(time.Second)
	}
	state := func() (int, string) {
		var attempts int
		var last string
		if err := s.DB().QueryRowContext(t.Context(), "SELECT attempts, last_error FROM "+s.Table()).Scan(&attempts, &last); err != nil {
			t.Fatal(err)
		}
		return attempts, last
	}
	fail(false, "not confirmed")
	if n, last := state(); n != 0 || last != "not confirmed" {
		t.Fatalf("after an uncounted failure: attempts %d, last_error %q", n, last)
	}
	fail(true, long)
	n, last := state()
	if n != 1 || utf8.RuneCountInString(last) != contract.OutboxMaxError || !strings.HasPrefix(long, strings.TrimSuffix(last, "…")) {
		t.Fatalf("after a counted failure: attempts %d, last_error of %d characters", n, utf8.RuneCountInString(last))
	}
	for range contract.OutboxMaxAttempts - 1 {
		fail(true, "no exchange")
	}
	if recs := claim(t, s, "a", 1, false); len(recs) != 0 {
		t.Fatalf("a record that failed %d times was offered", contract.OutboxMaxAttempts)
	}
	l, err := s.Lag(t.Context(), contract.OutboxMaxAttempts)
	if err != nil {
		t.Fatal(err)
	}
	if l.Pending != 0 || l.GivenUp != 1 {
		t.Errorf("lag %+v; want 1 given up", l)
	}
}

func release(t *testing.T, open func() *sqlstore.Store, _ *testclock.Clock) {
	s := open()
	ids := writeN(t, s, 2)
	claim(t, s, "a", 10, false)
	// Another owner's release does nothing.
	if err := s.Release(t.Context(), "b", ids); err != nil {
		t.Fatal(err)
	}
	if recs := claim(t, s, "b", 10, false); len(recs) != 0 {
		t.Fatal("b released a's lease")
	}
	if err := s.Release(t.Context(), "a", ids[1:]); err != nil {
		t.Fatal(err)
	}
	wantIDs(t, "b after a's release", claim(t, s, "b", 10, false), ids[1])
}

// An ordered claim takes the head of the table only: nothing while
// another owner holds a lease, nothing past a record that is not due.
func ordered(t *testing.T, open func() *sqlstore.Store, clock *testclock.Clock) {
	a, b := open(), open()
	ids := writeN(t, a, 4)
	wantIDs(t, "a", claim(t, a, "a", 2, true), ids[:2]...)
	if recs := claim(t, b, "b", 10, true); len(recs) != 0 {
		t.Fatalf("an ordered claim beside another owner's lease took %v", recordIDs(recs))
	}
	// a publishes the first, fails the second.
	if err := a.Published(t.Context(), ids[:1]); err != nil {
		t.Fatal(err)
	}
	if err := a.Failed(t.Context(), outbox.Failure{ID: ids[1], Owner: "a", Error: "unroutable", Counted: true, RetryDelay: time.Second}); err != nil {
		t.Fatal(err)
	}
	if recs := claim(t, b, "b", 10, true); len(recs) != 0 {
		t.Fatalf("an ordered claim passed a record waiting out its retry delay: %v", recordIDs(recs))
	}
	// An unordered claim passes it.
	wantIDs(t, "unordered", claim(t, b, "u", 1, false), ids[2])
	if err := b.Release(t.Context(), "u", ids[2:3]); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	wantIDs(t, "b after the delay", claim(t, b, "b", 10, true), ids[1:]...)
	// A record given up holds back the rest.
	if _, err := b.DB().ExecContext(t.Context(), fmt.Sprintf("UPDATE %s SET attempts = %d, locked_by = NULL, locked_until = NULL WHERE id = %d",
		b.Table(), contract.OutboxMaxAttempts, ids[1])); err != nil {
		t.Fatal(err)
	}
	if err := b.Release(t.Context(), "b", ids); err != nil {
		t.Fatal(err)
	}
	if recs := claim(t, b, "b", 10, true); len(recs) != 0 {
		t.Fatalf("an ordered claim passed a record given up: %v", recordIDs(recs))
	}
}

func lag(t *testing.T, open func() *sqlstore.Store, clock *testclock.Clock) {
	s := open()
	if l, err := s.Lag(t.Context(), contract.OutboxMaxAttempts); err != nil || l != (outbox.Lag{}) {
		t.Fatalf("lag of an empty table: %+v, %v", l, err)
	}
	ids := writeN(t, s, 1)
	clock.Advance(3 * time.Second)
	writeN(t, s, 2)
	clock.Advance(2 * time.Second)
	l, err := s.Lag(t.Context(), contract.OutboxMaxAttempts)
	if err != nil || l.Pending != 3 || l.GivenUp != 0 || l.Oldest != 5*time.Second {
		t.Fatalf("lag %+v, %v; want 3 pending, the oldest 5s old", l, err)
	}
	if err := s.Published(t.Context(), ids); err != nil {
		t.Fatal(err)
	}
	l, err = s.Lag(t.Context(), contract.OutboxMaxAttempts)
	if err != nil || l.Pending != 2 || l.Oldest != 2*time.Second {
		t.Fatalf("lag %+v, %v; want 2 pending, the oldest 2s old", l, err)
	}
}

func prune(t *testing.T, open func() *sqlstore.Store, clock *testclock.Clock) {
	s := open()
	ids := writeN(t, s, 3)
	if err := s.Published(t.Context(), ids[:1]); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	if err := s.Published(t.Context(), ids[1:2]); err != nil {
		t.Fatal(err)
	}
	n, err := s.Prune(t.Context(), 30*time.Minute)
	if err != nil || n != 1 {
		t.Fatalf("Prune = %d, %v; want the one published an hour ago", n, err)
	}
	clock.Advance(24 * time.Hour)
	n, err = s.Prune(t.Context(), time.Hour)
	if err != nil || n != 1 {
		t.Fatalf("Prune = %d, %v; want 1 (the unpublished one is kept)", n, err)
	}
	wantIDs(t, "the one left", claim(t, s, "a", 10, false), ids[2])
	if _, err := s.Prune(t.Context(), -time.Second); err == nil {
		t.Error("Prune took a negative retention")
	}
}

// A row another writer (or a person) got wrong comes back as a record
// with an error, for the relay to count, never as a failed claim.
func badRows(t *testing.T, open func() *sqlstore.Store, _ *testclock.Clock) {
	s := open()
	ids := writeN(t, s, 4)
	for i, set := range []string{"headers = '{not json'", "body_encoding = 'rot13'", "body_encoding = 'base64', body = '!!'"} {
		if _, err := s.DB().ExecContext(t.Context(), fmt.Sprintf("UPDATE %s SET %s WHERE id = %d", s.Table(), set, ids[i])); err != nil {
			t.Fatal(err)
		}
	}
	recs := claim(t, s, "a", 10, false)
	wantIDs(t, "a", recs, ids...)
	for i, r := range recs[:3] {
		if !errors.Is(r.Err, outbox.ErrBadRecord) || !strings.Contains(r.Err.Error(), fmt.Sprintf("record %d", r.ID)) {
			t.Errorf("bad row %d: %v; want ErrBadRecord naming the record", i, r.Err)
		}
	}
	if recs[3].Err != nil {
		t.Errorf("a good row: %v", recs[3].Err)
	}
}

// Owners claiming at once, each on a pool of its own, never share a record.
func concurrentClaims(t *testing.T, open func() *sqlstore.Store, _ *testclock.Clock) {
	const n, owners = 200, 4
	writeN(t, open(), n)
	var mu sync.Mutex
	seen := map[int64]string{}
	var wg sync.WaitGroup
	errs := make(chan error, owners)
	for o := range owners {
		s := open()
		owner := fmt.Sprintf("owner-%d", o)
		wg.Go(func() {
			for {
				recs, err := s.Claim(t.Context(), outbox.Claim{Owner: owner, Limit: 7, Lease: lease, MaxAttempts: 10})
				if err != nil {
					errs <- err
					return
				}
				if len(recs) == 0 {
					return
				}
				mu.Lock()
				for _, r := range recs {
					if other, ok := seen[r.ID]; ok {
						errs <- fmt.Errorf("record %d claimed by %s and %s", r.ID, other, owner)
					}
					seen[r.ID] = owner
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(seen) != n {
		t.Errorf("%d of %d records claimed", len(seen), n)
	}
}

func invalid(t *testing.T, open func() *sqlstore.Store, _ *testclock.Clock) {
	s := open()
	tx, err := s.DB().BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, m := range []outbox.Message{
		{Exchange: "x", RoutingKey: "k", Body: func() {}}, // JSON cannot encode it
		{Exchange: "x", RoutingKey: "k", Body: "b", Options: []acemq.MessageOption{acemq.WithHeaders(transport.Table{contract.HeaderID: "no"})}}, // reserved
		{Exchange: strings.Repeat("x", 256), RoutingKey: "k", Body: "b"},
		{Exchange: "x", RoutingKey: "\xff", Body: "b"},
		{Exchange: "x", RoutingKey: "k", Body: "b", Options: []acemq.MessageOption{acemq.WithHeaders(transport.Table{"bad": make(chan int)})}},
	} {
		if _, err := s.Write(t.Context(), tx, m); err == nil {
			t.Errorf("Write took %+v", m)
		}
	}
	for _, c := range []outbox.Claim{{Limit: 1, Lease: lease, MaxAttempts: 1}, {Owner: "a", Lease: lease, MaxAttempts: 1},
		{Owner: "a", Limit: 1, MaxAttempts: 1}, {Owner: "a", Limit: 1, Lease: lease}} {
		if _, err := s.Claim(t.Context(), c); err == nil {
			t.Errorf("Claim took %+v", c)
		}
	}
}

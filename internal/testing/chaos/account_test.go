package chaos

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
)

func set(ns ...int) map[int]bool {
	m := map[int]bool{}
	for _, n := range ns {
		m[n] = true
	}
	return m
}

func counts(ns ...int) map[int]int {
	m := map[int]int{}
	for _, n := range ns {
		m[n]++
	}
	return m
}

// The accounting catches what the harness exists to catch, without a broker.
func TestAccount(t *testing.T) {
	all := []int{0, 1, 6, 7, 8, 9, 10}
	good := func() tally {
		return tally{published: 8, confirmed: set(all...), unconfirmed: set(19),
			accepted: counts(0, 1, 6, 7, 10), records: 5,
			dlq: counts(8), parked: counts(9), queued: counts()}
	}
	rep := account(good())
	if !rep.OK() || rep.Accepted != 5 || rep.DeadLettered != 1 || rep.Parked != 1 || rep.Duplicates != 0 || rep.Confirmed != 7 || rep.Unconfirmed != 1 {
		t.Fatalf("a clean run: %+v", rep)
	}

	tl := good()
	tl.accepted = counts(0, 1, 6, 10) // 7 never accepted
	tl.records = 4
	if rep := account(tl); rep.OK() || !slices.Equal(rep.Lost, []int{7}) {
		t.Errorf("lost 7: %+v", rep)
	}

	tl = good()
	tl.dlq = counts(8, 6) // 6 both accepted and dead-lettered
	if rep := account(tl); rep.OK() || len(rep.Misplaced) != 1 || !strings.HasPrefix(rep.Misplaced[0], "6: in dlq") {
		t.Errorf("misplaced 6: %+v", rep)
	}

	tl = good()
	tl.parked = counts(9, 19) // an unconfirmed message may arrive, in its place
	if rep := account(tl); !rep.OK() || rep.Recovered != 1 {
		t.Errorf("unconfirmed 19 arrived in parked: %+v", rep)
	}
	tl.parked = counts(9, 29) // 29 was never published
	tl.accepted[31]++         // nor was 31
	tl.records++
	if rep := account(tl); rep.OK() || !slices.Equal(rep.Unexpected, []string{"29: in parked", "31: in accepted"}) || len(rep.Misplaced) != 0 {
		t.Errorf("29 and 31 never published: unexpected %q, misplaced %q; want them unexpected only", rep.Unexpected, rep.Misplaced)
	}

	tl = good()
	tl.accepted = counts(0, 0, 1, 6, 7, 10)
	tl.records = 6
	tl.dlq = counts(8, 8)
	tl.queued = counts(1) // a second copy still on its way
	if rep := account(tl); !rep.OK() || rep.Duplicates != 3 {
		t.Errorf("duplicates are counted, not failures: %+v", rep)
	}

	tl = good()
	tl.accepted = counts(0, 1, 6, 10)
	tl.records = 4
	tl.queued = counts(7)
	if rep := account(tl); rep.OK() || rep.StillQueued != 1 || len(rep.Lost) != 0 {
		t.Errorf("7 still queued: %+v", rep)
	}
}

// A number's rung hops follow the policy: with RungPolicy a 7 waits on a
// rung once (its second failure), an 8 three times; with every wait in the
// consumer none does.
func TestRungHops(t *testing.T) {
	rungs, err := acemq.ParsePolicy(RungPolicy)
	if err != nil {
		t.Fatal(err)
	}
	none, err := acemq.ParsePolicy("exponential(4, 100ms, 400ms)")
	if err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int]int{0: 0, 5: 0, 6: 0, 7: 1, 8: 3, 9: 0, 17: 1, 28: 3} {
		if got := rungHops(rungs, n); got != want {
			t.Errorf("rungHops(%s, %d) = %d, want %d", RungPolicy, n, got, want)
		}
		if got := rungHops(none, n); got != 0 {
			t.Errorf("rungHops(consumer waits, %d) = %d, want 0", n, got)
		}
	}
}

// Contract rungs' losses are expected only on the way through a rung.
func TestOKButRungHops(t *testing.T) {
	rep := Report{Lost: []int{7, 8}, LostByHops: map[int]int{1: 1, 3: 1}}
	if rep.OK() || !rep.OKButRungHops() {
		t.Errorf("lost on rungs only: OK %v, OKButRungHops %v", rep.OK(), rep.OKButRungHops())
	}
	for _, bad := range []Report{
		{Lost: []int{3, 8}, LostByHops: map[int]int{0: 1, 3: 1}}, // 3 never waits on a rung
		{Lost: []int{8}, LostByHops: map[int]int{3: 1}, StillQueued: 1},
		{Lost: []int{8}, LostByHops: map[int]int{3: 1}, Misplaced: []string{"6: in dlq, expected accepted"}},
		{HeldByRungs: 2},
	} {
		if bad.OKButRungHops() {
			t.Errorf("%+v: OKButRungHops, want not", bad)
		}
	}
}

// Lost numbers are placed around the fault nearest their confirm.
func TestLostByFault(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	r := &run{t00: t0, faultStart: []time.Time{at(10), at(40)},
		confirmedAt: map[int]time.Time{0: at(8), 10: at(11), 20: at(38.5), 30: at(41)}}
	got := r.lostByFault([]int{7, 18, 27, 38})
	want := []string{
		"2 around fault 1 (+10s), from 2s before to 1s after its start",
		"2 around fault 2 (+40s), from 1.5s before to 1s after its start",
	}
	if !slices.Equal(got, want) {
		t.Errorf("lostByFault:\n got %q\nwant %q", got, want)
	}
}

// Dead letters a rung still holds, when every confirmed message is settled,
// are copies on their way back (a killed consumer's retries): not a
// failure. With a loss they may be the lost messages: a failure.
func TestHeldByRungs(t *testing.T) {
	if rep := (Report{HeldByRungs: 3, Duplicates: 19}); !rep.OK() {
		t.Errorf("%+v: nothing lost, 3 copies held: want OK", rep)
	}
	if rep := (Report{Lost: []int{5}, LostByHops: map[int]int{1: 1}, HeldByRungs: 1}); rep.OK() || rep.OKButRungHops() {
		t.Errorf("%+v: one lost, one held: OK %v, OKButRungHops %v; want neither", rep, rep.OK(), rep.OKButRungHops())
	}
}

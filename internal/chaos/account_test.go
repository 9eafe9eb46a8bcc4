package chaos

import (
	"slices"
	"strings"
	"testing"
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
	if rep := account(tl); !rep.OK() || rep.UnconfArrived != 1 {
		t.Errorf("unconfirmed 19 arrived in parked: %+v", rep)
	}
	tl.parked = counts(9, 29) // 29 was never published
	if rep := account(tl); rep.OK() {
		t.Errorf("29 never published: %+v", rep)
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

package chaos

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The idempotent consumer: the consumer process run with --store (and
// --tx), its handler wrapped with idempotency.Handler or
// sqlstore.TxHandler. It appends its events to a side log (the consumer's
// package comment lists them); Idempotent reads that log, with the run's
// Report and, for --tx, the rows of work the database holds, and accounts
// for every run of the work.

// EventsFile is the side log's name in Config.Dir.
const EventsFile = "events.log"

// IdempotentArgs are the consumer's arguments for the idempotent consumer
// on store (sqlite:PATH or a postgres:// URL) in table, its events in dir;
// with work, the work is a row in that table, in the confirm's
// transaction.
func IdempotentArgs(dir, store, table, work string, claimTimeout time.Duration) []string {
	args := []string{"--store", store, "--store-table", table, "--events", filepath.Join(dir, EventsFile),
		"--claim-timeout", claimTimeout.String()}
	if work != "" {
		args = append(args, "--tx", "--work-table", work)
	}
	return args
}

// IdempotentReport is what a run of the idempotent consumer did with the
// work.
type IdempotentReport struct {
	Store string // SQLite, PostgreSQL
	// SameTx: the work was a row written in the confirm's transaction.
	SameTx bool
	// Messages is how many numbers had their work done; WorkRuns how many
	// times work was done in all (without SameTx, the work records; with
	// it, the committed rows).
	Messages, WorkRuns int
	// RunTwice explains each run of the work beyond a number's first: the
	// earlier run's process was SIGKILLed after the work and before the
	// confirm.
	RunTwice []string
	// ClaimExpired are runs beyond the first that came after the earlier
	// run's claim had expired: the earlier run held it (from its claim to
	// its confirm) longer than the claim timeout, which
	// idempotency.WithClaimTimeout says hands the message over. On a
	// machine so loaded that a millisecond handler takes that long, this
	// is the documented behaviour, not a loss of idempotency; a second run
	// within the timeout is Unexplained.
	ClaimExpired []string
	// Unexplained are runs beyond the first that the kills do not explain
	// (a failure when there is any).
	Unexplained []string
	// Absorbed is how many duplicate deliveries the store absorbed (the
	// handler not run); PutBack how many copies were put back because
	// another process held the claim (a killed one's, until it expired).
	Absorbed, PutBack int
	// RolledBack (SameTx) is how many transactions with the work in them
	// died with their process before COMMIT, and left nothing.
	RolledBack int
	// Unconfirmed are the runs the handler accepted that the wrapper did
	// not (a failed confirm or commit, a lost claim), with why.
	Unconfirmed []string
	// WithoutWork are accepted numbers whose work is not there; WorkNotAccepted
	// numbers with work that were never accepted (failures both).
	WithoutWork, WorkNotAccepted []int
}

// OK reports whether every accepted message's work was done, and done
// again only where a kill explains it (SameTx: never again).
func (r IdempotentReport) OK() bool {
	return len(r.Unexplained) == 0 && len(r.WithoutWork) == 0 && len(r.WorkNotAccepted) == 0 && (!r.SameTx || len(r.RunTwice) == 0)
}

// String is the report as a table.
func (r IdempotentReport) String() string {
	var b strings.Builder
	row := func(k string, v any) { fmt.Fprintf(&b, "  %-22s %v\n", k, v) }
	mode := "idempotency.Handler (work, then confirm)"
	if r.SameTx {
		mode = "sqlstore.TxHandler (work and confirm in one transaction)"
	}
	fmt.Fprintf(&b, "idempotent consumer on %s, %s\n", r.Store, mode)
	row("messages with work", r.Messages)
	row("work done", r.WorkRuns)
	row("work done twice", len(r.RunTwice)+len(r.ClaimExpired)+len(r.Unexplained))
	row("  explained by a kill", len(r.RunTwice))
	row("  after claim expiry", len(r.ClaimExpired))
	row("  unexplained", len(r.Unexplained))
	row("duplicates absorbed", r.Absorbed)
	row("put back (claim held)", r.PutBack)
	if r.SameTx {
		row("rolled back by a kill", r.RolledBack)
	}
	row("unconfirmed runs", len(r.Unconfirmed))
	row("accepted without work", len(r.WithoutWork))
	row("work not accepted", len(r.WorkNotAccepted))
	for _, e := range r.RunTwice {
		row("run twice", e)
	}
	for _, e := range r.ClaimExpired {
		row("claim expired", e)
	}
	for _, e := range r.Unexplained {
		row("UNEXPLAINED", e)
	}
	for i, e := range r.Unconfirmed {
		if i == 10 {
			row("unconfirmed", fmt.Sprintf("(%d more)", len(r.Unconfirmed)-10))
			break
		}
		row("unconfirmed", e)
	}
	if len(r.WithoutWork) > 0 {
		row("without work", abbreviate(r.WithoutWork, 40))
	}
	if len(r.WorkNotAccepted) > 0 {
		row("work not accepted", abbreviate(r.WorkNotAccepted, 40))
	}
	return b.String()
}

// event is a line of the side log.
type event struct {
	kind string
	n    int
	pid  int
	at   time.Time
	err  string
}

// readEvents reads the side log; a last line cut short is left out.
func readEvents(path string) ([]event, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
		data = data[:i+1]
	} else {
		data = nil
	}
	var evs []event
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), " ", 5)
		if len(f) < 4 {
			return nil, fmt.Errorf("%s: bad event %q", path, sc.Text())
		}
		var e event
		var ms int64
		var errs []error
		e.kind = f[0]
		e.n, err = strconv.Atoi(f[1])
		errs = append(errs, err)
		e.pid, err = strconv.Atoi(f[2])
		errs = append(errs, err)
		ms, err = strconv.ParseInt(f[3], 10, 64)
		errs = append(errs, err)
		for _, err := range errs {
			if err != nil {
				return nil, fmt.Errorf("%s: bad event %q: %w", path, sc.Text(), err)
			}
		}
		e.at = time.UnixMilli(ms)
		if len(f) == 5 {
			e.err, _ = strconv.Unquote(f[4])
		}
		evs = append(evs, e)
	}
	return evs, sc.Err()
}

// Idempotent accounts for the work of rep's run, from the side log in dir
// and the accept log; claimTimeout is the consumers' (IdempotentArgs). rows
// is nil without SameTx; with it, the rows of work the database holds, by
// number.
func Idempotent(rep Report, dir, store string, claimTimeout time.Duration, rows map[int]int) (IdempotentReport, error) {
	out := IdempotentReport{Store: store, SameTx: rows != nil}
	evs, err := readEvents(filepath.Join(dir, EventsFile))
	if err != nil {
		return out, err
	}
	accepted, _, err := newAcceptLog(filepath.Join(dir, "accepted.log")).read()
	if err != nil {
		return out, err
	}
	killed := map[int]time.Time{}
	for _, k := range rep.Kills {
		killed[k.PID] = k.At
	}
	confirmed := map[numPID]bool{}
	claims := map[numPID][]time.Time{} // in order
	var works []event                  // the work's runs, in order (without SameTx)
	for _, e := range evs {
		switch e.kind {
		case "claimed":
			claims[numPID{e.n, e.pid}] = append(claims[numPID{e.n, e.pid}], e.at)
		case "duplicate":
			out.Absorbed++
		case "busy":
			out.PutBack++
		case "confirmed":
			confirmed[numPID{e.n, e.pid}] = true
		case "unconfirmed":
			out.Unconfirmed = append(out.Unconfirmed, fmt.Sprintf("%d by pid %d: %s", e.n, e.pid, e.err))
		case "work":
			works = append(works, e)
		}
	}
	done := map[int]int{}
	if out.SameTx {
		maps.Copy(done, rows)
		for _, e := range evs {
			if _, ok := killed[e.pid]; ok && e.kind == "tx" && !confirmed[numPID{e.n, e.pid}] {
				out.RolledBack++
			}
		}
		for _, n := range slices.Sorted(maps.Keys(rows)) {
			if rows[n] > 1 {
				out.Unexplained = append(out.Unexplained, fmt.Sprintf("%d: %d rows of work committed", n, rows[n]))
			}
		}
	} else {
		byN := map[int][]event{}
		for _, e := range works {
			byN[e.n] = append(byN[e.n], e)
			done[e.n]++
		}
		for _, n := range slices.Sorted(maps.Keys(byN)) {
			runs := byN[n]
			for i, e := range runs[:len(runs)-1] {
				next := runs[i+1]
				at, wasKilled := killed[e.pid]
				held, expired := claimHeld(claims, e, next, claimTimeout)
				switch {
				case wasKilled && !confirmed[numPID{n, e.pid}] && next.pid != e.pid:
					out.RunTwice = append(out.RunTwice, fmt.Sprintf("%d: work by pid %d %v before its SIGKILL, which came before the confirm; run again by pid %d %v after the kill",
						n, e.pid, at.Sub(e.at).Round(time.Millisecond), next.pid, next.at.Sub(at).Round(time.Millisecond)))
				case expired:
					out.ClaimExpired = append(out.ClaimExpired, fmt.Sprintf("%d: claimed by pid %d, claimed again by pid %d %v later, past the %v claim timeout",
						n, e.pid, next.pid, held.Round(time.Millisecond), claimTimeout))
				default:
					out.Unexplained = append(out.Unexplained, fmt.Sprintf("%d: work by pid %d (killed %v, confirmed %v), run again by pid %d, claimed %v after the first claim",
						n, e.pid, wasKilled, confirmed[numPID{n, e.pid}], next.pid, held.Round(time.Millisecond)))
				}
			}
		}
	}
	for n, c := range done {
		out.Messages++
		out.WorkRuns += c
		if accepted[n] == 0 {
			out.WorkNotAccepted = append(out.WorkNotAccepted, n)
		}
	}
	for n := range accepted {
		if done[n] == 0 {
			out.WithoutWork = append(out.WithoutWork, n)
		}
	}
	slices.Sort(out.WorkNotAccepted)
	slices.Sort(out.WithoutWork)
	return out, nil
}

// numPID is a number as one process handled it.
type numPID struct{ n, pid int }

// claimHeld is the time from the claim under which run ran to the claim
// under which next ran (each its process's last claim of the number
// before its work), and whether it passed the claim timeout; without both
// claims in the log, 0 and false.
func claimHeld(claims map[numPID][]time.Time, run, next event, timeout time.Duration) (time.Duration, bool) {
	first, ok1 := lastBefore(claims[numPID{run.n, run.pid}], run.at)
	second, ok2 := lastBefore(claims[numPID{next.n, next.pid}], next.at)
	if !ok1 || !ok2 {
		return 0, false
	}
	held := second.Sub(first)
	return held, held >= timeout
}

// lastBefore is the last of times (in order) not after t.
func lastBefore(times []time.Time, t time.Time) (time.Time, bool) {
	var last time.Time
	found := false
	for _, at := range times {
		if at.After(t) {
			break
		}
		last, found = at, true
	}
	return last, found
}

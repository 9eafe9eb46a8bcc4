package chaos

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestIdempotentReportClassifiesSecondRuns: a second run of a message's
// work is explained by a kill between the work and the confirm, or by a
// claim older than the claim timeout when the second claim was made; any
// other second run is unexplained.
func TestIdempotentReportClassifiesSecondRuns(t *testing.T) {
	const timeout = 10 * time.Second
	ms := func(s float64) int64 { return 1_000_000 + int64(s*1000) }
	line := func(kind string, n, pid int, s float64) string {
		return fmt.Sprintf("%s %d %d %d\n", kind, n, pid, ms(s))
	}
	events := "" +
		// 1: pid 10 works, is killed before its confirm; pid 11 takes over.
		line("claimed", 1, 10, 0) + line("work", 1, 10, 0.1) +
		line("claimed", 1, 11, 10.5) + line("work", 1, 11, 10.6) + line("confirmed", 1, 11, 10.7) +
		// 2: pid 11 holds its claim past the timeout; pid 12 takes over.
		line("claimed", 2, 11, 1) + line("work", 2, 11, 1.1) +
		line("claimed", 2, 12, 11.5) + line("work", 2, 12, 11.6) + line("confirmed", 2, 12, 11.7) +
		line("confirmed", 2, 11, 12) +
		// 3: run again within the timeout, nobody killed: unexplained.
		line("claimed", 3, 11, 2) + line("work", 3, 11, 2.1) + line("confirmed", 3, 11, 2.2) +
		line("claimed", 3, 12, 4) + line("work", 3, 12, 4.1) + line("confirmed", 3, 12, 4.2)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, EventsFile), []byte(events), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "accepted.log"), []byte("1\n2\n2\n3\n3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := Report{Kills: []KilledProcess{{PID: 10, At: time.UnixMilli(ms(0.2))}}}
	got, err := Idempotent(rep, dir, "SQLite", timeout, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.RunTwice) != 1 || !strings.HasPrefix(got.RunTwice[0], "1: ") {
		t.Errorf("explained by a kill: %q, want message 1's", got.RunTwice)
	}
	if len(got.ClaimExpired) != 1 || !strings.HasPrefix(got.ClaimExpired[0], "2: ") {
		t.Errorf("after claim expiry: %q, want message 2's", got.ClaimExpired)
	}
	if len(got.Unexplained) != 1 || !strings.HasPrefix(got.Unexplained[0], "3: ") {
		t.Errorf("unexplained: %q, want message 3's", got.Unexplained)
	}
	if got.OK() {
		t.Error("OK() with an unexplained second run")
	}
}

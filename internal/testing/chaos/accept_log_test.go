package chaos

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAcceptLogReadsWhatWasAdded reads a log as the consumer appends to it:
// counts and records add up across reads, and a last line without its
// newline waits for the read after the one that sees it.
func TestAcceptLogReadsWhatWasAdded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "accepted.log")
	l := newAcceptLog(path)
	if counts, records, err := l.read(); err != nil || len(counts) != 0 || records != 0 {
		t.Fatalf("no log yet: %v, %d, %v", counts, records, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	write := func(s string) {
		t.Helper()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}

	write("1\n2\n1\n4")
	counts, records, err := l.read()
	if err != nil {
		t.Fatal(err)
	}
	if records != 3 || counts[1] != 2 || counts[2] != 1 || counts[4] != 0 {
		t.Fatalf("after 1, 2, 1 and a partial 4: %v, %d records", counts, records)
	}
	if after, err := l.acceptedFrom(3); err != nil || after {
		t.Fatalf("acceptedFrom(3) with 4 unfinished: %v, %v", after, err)
	}

	write("2\n7\n")
	if after, err := l.acceptedFrom(5); err != nil || !after {
		t.Fatalf("acceptedFrom(5) after 42 and 7: %v, %v", after, err)
	}
	counts, records, err = l.read()
	if err != nil {
		t.Fatal(err)
	}
	if records != 5 || counts[42] != 1 || counts[7] != 1 || counts[1] != 2 {
		t.Fatalf("after 42 and 7: %v, %d records", counts, records)
	}

	write("8\nx\n")
	if _, _, err := l.read(); err == nil {
		t.Fatal("a bad record read without an error")
	}
	// The record before the bad one counts once, however often it is read.
	if _, _, err := l.read(); err == nil || l.records != 6 || l.counts[8] != 1 {
		t.Fatalf("read again after the bad record: %v, counts[8] = %d, %d records", err, l.counts[8], l.records)
	}
}

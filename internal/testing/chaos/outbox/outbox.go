// Package outboxchaos is the transactional outbox's chaos harness: a writer
// process writes numbered records to an outbox table (one transaction
// each), two relay processes publish them to a queue, and one relay at a
// time is SIGKILLed, mid-batch, and restarted; then every record is
// accounted for in the queue: none may be missing, and every duplicate is
// counted and must be explained. A record may be published once more for
// each claim of it that did not end marked published within its lease: the
// relay was killed holding it, its publish or its mark failed, or the mark
// came after the lease (on a loaded machine), and so another claim took it
// over. A second copy without such a claim (two relays holding one record
// under live leases) is a failure.
package outboxchaos

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/outbox"
	"github.com/acemq-go/acemq/outbox/sqlstore"
	"github.com/acemq-go/acemq/outbox/sqlstore/postgres"
	"github.com/acemq-go/acemq/outbox/sqlstore/sqlite"
)

// Config is one run.
type Config struct {
	Bin       string // the proc binary (Build)
	DB        string // a SQLite file or a postgres:// URL
	Table     string
	BrokerURL string
	Queue     string
	N         int           // records written
	Rate      int           // records a second the writer writes
	Kills     int           // SIGKILLs of a relay
	Batch     int           // the relays' batch size
	Lease     time.Duration // the relays' lease
	Dir       string        // for the relays' logs
}

// Report is what a run found.
type Report struct {
	DB                string
	Written, Kills    int
	RelaysStarted     int
	Lost              []int
	Arrived, Distinct int
	// Duplicates counts the copies beyond the first; DuplicatedRecords the
	// records that had any; Unexplained those with more copies than claims
	// of theirs not marked within their lease.
	Duplicates        int
	DuplicatedRecords []int
	Unexplained       []int
	// Unmarked counts the records of claims not marked within their lease,
	// by why: the relay was killed holding them, their publish or mark
	// failed, or the mark came after the lease. Their sum bounds the
	// duplicates.
	Unmarked Unmarked
	Lease    time.Duration
	Duration time.Duration
}

// Unmarked is claimed records not marked published within their lease.
type Unmarked struct{ Killed, Failed, Late int }

// Sum is all of them.
func (u Unmarked) Sum() int { return u.Killed + u.Failed + u.Late }

// OK says whether the run kept the outbox's promise.
func (r Report) OK() bool {
	return len(r.Lost) == 0 && len(r.Unexplained) == 0 && r.Duplicates <= r.Unmarked.Sum() && r.Distinct == r.Written
}

func (r Report) String() string {
	return fmt.Sprintf("outbox chaos on %s: %d records written, %d relay SIGKILLs (%d relay processes, 2 at a time, lease %v); "+
		"%d arrived, %d distinct, %d lost %v; %d duplicates of %d records %v (unexplained: %v), "+
		"bound %d: claimed records not marked within their lease (%d held by killed relays, %d failed, %d marked late); %v",
		r.DB, r.Written, r.Kills, r.RelaysStarted, r.Lease, r.Arrived, r.Distinct, len(r.Lost), abbreviate(r.Lost),
		r.Duplicates, len(r.DuplicatedRecords), abbreviate(r.DuplicatedRecords), r.Unexplained,
		r.Unmarked.Sum(), r.Unmarked.Killed, r.Unmarked.Failed, r.Unmarked.Late, r.Duration.Round(time.Millisecond))
}

func abbreviate(ns []int) string {
	if len(ns) <= 20 {
		return fmt.Sprint(ns)
	}
	return fmt.Sprint(ns[:20]) + "..."
}

// MessageIDPrefix and the record's number make the id of its message.
const MessageIDPrefix = "outbox-chaos-"

// MessageID is the id of record n's message.
func MessageID(n int) string { return MessageIDPrefix + strconv.Itoa(n) }

// Ready is the line a relay process prints once a SIGTERM stops it cleanly.
const Ready = "ready"

// Build builds the proc binary into dir.
func Build(ctx context.Context, dir string) (string, error) {
	out := filepath.Join(dir, "outbox-chaos-proc")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "github.com/acemq-go/acemq/internal/testing/chaos/outbox/proc")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build of the outbox chaos process: %w\n%s", err, b)
	}
	return out, nil
}

func open(ctx context.Context, dsn, table string) (*sqlstore.Store, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return postgres.Open(ctx, dsn, sqlstore.WithTable(table))
	}
	return sqlite.Open(ctx, dsn, sqlstore.WithTable(table))
}

type proc struct {
	name   string
	cmd    *exec.Cmd
	log    string
	killed bool
	done   chan error
}

// Run runs one scenario; an error says the harness itself failed.
func Run(ctx context.Context, cfg Config) (Report, error) {
	start := time.Now()
	rep := Report{DB: dbName(cfg.DB), Written: cfg.N, Lease: cfg.Lease}
	store, err := open(ctx, cfg.DB, cfg.Table) // migrates before the processes start
	if err != nil {
		return rep, err
	}
	defer store.Close()
	conn, err := acemq.Connect(ctx, cfg.BrokerURL, acemq.WithConnectionName("outbox-chaos-harness"))
	if err != nil {
		return rep, err
	}
	defer conn.Close()
	if err := (acemq.Topology{Queues: []acemq.QueueSpec{{Name: cfg.Queue}}}).Apply(ctx, conn); err != nil {
		return rep, err
	}

	var procs []*proc
	startRelay := func() (*proc, error) {
		name := fmt.Sprintf("relay-%d", len(procs))
		p := &proc{name: name, log: filepath.Join(cfg.Dir, name+".log"), done: make(chan error, 1)}
		p.cmd = exec.Command(cfg.Bin, "relay", "-db", cfg.DB, "-table", cfg.Table, "-broker", cfg.BrokerURL, "-name", name,
			"-batch", strconv.Itoa(cfg.Batch), "-lease", cfg.Lease.String(), "-log", p.log)
		p.cmd.Stderr = os.Stderr
		stdout, err := p.cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := p.cmd.Start(); err != nil {
			return nil, err
		}
		// Until it says ready, SIGTERM would kill the process rather than
		// stop the relay (the harness's end can come that soon on a slow
		// machine).
		ready, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil || ready != Ready+"\n" {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
			return nil, fmt.Errorf("relay %s did not start: %q %v", name, ready, err)
		}
		go func() { p.done <- p.cmd.Wait() }()
		procs = append(procs, p)
		return p, nil
	}
	defer func() {
		for _, p := range procs {
			if p.cmd.ProcessState == nil {
				_ = p.cmd.Process.Kill()
			}
		}
	}()
	running := make([]*proc, 2)
	for i := range running {
		if running[i], err = startRelay(); err != nil {
			return rep, err
		}
	}
	writer := exec.CommandContext(ctx, cfg.Bin, "write", "-db", cfg.DB, "-table", cfg.Table, "-queue", cfg.Queue,
		"-n", strconv.Itoa(cfg.N), "-rate", strconv.Itoa(cfg.Rate))
	writer.Stderr = os.Stderr
	if err := writer.Start(); err != nil {
		return rep, err
	}
	writerDone := make(chan error, 1)
	go func() { writerDone <- writer.Wait() }()

	// The kills, spread over the writing: each waits for its victim to be
	// sending (its log growing), so that it lands mid-batch.
	spacing := time.Duration(float64(time.Second) * float64(cfg.N) / float64(cfg.Rate) / float64(cfg.Kills+1))
	for i := range cfg.Kills {
		time.Sleep(spacing/2 + rand.N(spacing))
		victim := running[i%2]
		waitSending(victim.log, time.Second)
		victim.killed = true
		if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			return rep, err
		}
		<-victim.done
		rep.Kills++
		if running[i%2], err = startRelay(); err != nil {
			return rep, err
		}
	}
	if err := <-writerDone; err != nil {
		return rep, fmt.Errorf("the writer: %w", err)
	}
	// Everything published: a killed relay's batch after its lease.
	deadline := time.Now().Add(2*cfg.Lease + time.Minute)
	for {
		lag, err := store.Lag(ctx, outbox.DefaultMaxAttempts)
		if err != nil {
			return rep, err
		}
		if lag.Pending == 0 && lag.GivenUp == 0 {
			break
		}
		if time.Now().After(deadline) {
			return rep, fmt.Errorf("still %d pending, %d given up", lag.Pending, lag.GivenUp)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, p := range running {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		if err := <-p.done; err != nil {
			return rep, fmt.Errorf("relay %s: %w", p.name, err)
		}
	}
	rep.RelaysStarted = len(procs)

	// The consumer: what arrived, by number.
	arrived := map[int]int{}
	for {
		d, ok, err := conn.Transport().Get(ctx, cfg.Queue)
		if err != nil {
			return rep, err
		}
		if !ok {
			break
		}
		n, err := strconv.Atoi(string(d.Body))
		if err != nil || acemq.ReadEnvelope(d.Message).ID != MessageID(n) {
			return rep, fmt.Errorf("a message that is not a record: %q %v", d.Body, d.Headers)
		}
		arrived[n]++
		rep.Arrived++
		if err := d.Ack(); err != nil {
			return rep, err
		}
	}
	_, _ = conn.Transport().DeleteQueue(ctx, cfg.Queue)
	// Each claim of a record not marked within its lease allows one more copy.
	unmarked := map[int]int{}
	for _, p := range procs {
		u, err := unmarkedClaims(p.log, cfg.Lease, p.killed, unmarked)
		if err != nil {
			return rep, err
		}
		rep.Unmarked.Killed += u.Killed
		rep.Unmarked.Failed += u.Failed
		rep.Unmarked.Late += u.Late
	}
	for n := range cfg.N {
		switch c := arrived[n]; {
		case c == 0:
			rep.Lost = append(rep.Lost, n)
		case c > 1:
			rep.Duplicates += c - 1
			rep.DuplicatedRecords = append(rep.DuplicatedRecords, n)
			if c-1 > unmarked[n] {
				rep.Unexplained = append(rep.Unexplained, n)
			}
		}
		if arrived[n] > 0 {
			rep.Distinct++
		}
	}
	slices.Sort(rep.DuplicatedRecords)
	rep.Duration = time.Since(start)
	return rep, nil
}

func dbName(dsn string) string {
	if strings.HasPrefix(dsn, "postgres") {
		return "PostgreSQL"
	}
	return "SQLite"
}

// waitSending waits until the log at path grows, for up to limit.
func waitSending(path string, limit time.Duration) {
	size := func() int64 {
		st, err := os.Stat(path)
		if err != nil {
			return 0
		}
		return st.Size()
	}
	before := size()
	for end := time.Now().Add(limit); time.Now().Before(end) && size() == before; {
		time.Sleep(2 * time.Millisecond)
	}
}

// unmarkedClaims reads a relay's log (proc's "claimed" and "published"
// lines) and adds to unmarked, for each record, the claims of it that did
// not end marked published within the lease: claimed again before a mark
// (its publish or mark failed), marked after the lease, or still held at
// the end (by a killed relay, or failed).
func unmarkedClaims(path string, lease time.Duration, killed bool, unmarked map[int]int) (Unmarked, error) {
	var u Unmarked
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return u, nil
	}
	if err != nil {
		return u, err
	}
	defer f.Close()
	held := map[int]time.Time{} // record -> when its claim began
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 2 {
			continue // a line the kill cut short
		}
		nanos, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			return u, fmt.Errorf("%s: %q: %w", path, s.Text(), err)
		}
		at := time.Unix(0, nanos)
		for _, field := range fields[2:] {
			n, err := strconv.Atoi(field)
			if err != nil {
				return u, fmt.Errorf("%s: %q: %w", path, s.Text(), err)
			}
			began, ok := held[n]
			switch fields[0] {
			case "claimed":
				if ok {
					u.Failed++
					unmarked[n]++
				}
				held[n] = at
			case "published":
				if ok && at.After(began.Add(lease)) {
					u.Late++
					unmarked[n]++
				}
				delete(held, n)
			}
		}
	}
	for n := range held {
		if killed {
			u.Killed++
		} else {
			u.Failed++
		}
		unmarked[n]++
	}
	return u, s.Err()
}

// Package soak is the family's endurance soak (CONTRACT.md section 22),
// scaled to fit make chaos: it launches examples/standing-load against a
// broker as a process, takes Readings readings of it (descriptors, threads
// and resident memory from /proc/PID, as the family does; goroutines from
// the load's debug address), closes the load's connections through the
// management API once a cycle, takes as many final readings, stops the load
// (which then drains, and exits 0 only when every confirmed message was
// consumed) and judges it by the family's allowances (report.go).
package soak

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"time"

	"github.com/acemq-go/acemq/internal/testing/brokertest"
)

// Config is one soak.
type Config struct {
	Bin           string // the standing load, built by Build
	URL           string // the broker
	ManagementURL string // its management API, with its credentials
	// Name names the load's connections (Name-publisher, Name-consumer),
	// the ones the soak closes, and prefixes its queue.
	Name   string
	Closes int           // how many cycles, each with a close
	Every  time.Duration // a cycle's length
	Dir    string        // the load's stderr goes to Dir/standing-load.stderr
	Logf   func(format string, args ...any)
}

// spacing is the time between two readings of a set, and the load's
// interval.
const spacing = time.Second

// Bounds on waits for the load, which answer in seconds: its start (the
// debug address, then its first consumed message and its first use of the
// ladder) and its end (its drain is bounded by its -drain, a minute, and
// the consumer's close).
const (
	startLimit = time.Minute
	stopLimit  = 3 * time.Minute
)

// Build compiles examples/standing-load into dir, from the repository
// above the working directory, and returns its path.
func Build(ctx context.Context, dir string) (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "standing-load")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./standing-load")
	cmd.Dir = filepath.Join(root, "examples")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./examples/standing-load: %w\n%s", err, b)
	}
	return out, nil
}

// repoRoot is the nearest directory above the working directory that
// holds examples/standing-load.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "examples", "standing-load")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no examples/standing-load above the working directory")
		}
		dir = parent
	}
}

// Run runs the soak. An error is the soak's own failure (the load did not
// start, its connections did not come back within 15s of a close); the
// load's verdict is the report's Problems.
func Run(ctx context.Context, cfg Config) (rep Report, err error) {
	rep = Report{Closes: cfg.Closes, Every: cfg.Every.String(), Broker: brokerVersion(ctx, cfg.ManagementURL)}
	l, err := start(cfg)
	if err != nil {
		return rep, err
	}
	defer func() {
		rep.Exit = l.stop()
		rep.Lines, rep.AtEnd, rep.BadLines = l.lines()
	}()
	if err := l.warm(ctx); err != nil {
		return rep, err
	}
	if rep.Baseline, err = l.readings(ctx); err != nil {
		return rep, err
	}
	_, rep.AtFirstClose, _ = l.lines()
	names := []string{cfg.Name + "-publisher", cfg.Name + "-consumer"}
	for i := range cfg.Closes {
		before, err := readVars(ctx, l.debugURL)
		if err != nil {
			return rep, err
		}
		if _, err := brokertest.CloseNamed(ctx, cfg.ManagementURL, names...); err != nil {
			return rep, fmt.Errorf("close %d of %d: %w", i+1, cfg.Closes, err)
		}
		if err := l.wait(ctx, cfg.Every); err != nil {
			return rep, err
		}
		after, err := readVars(ctx, l.debugURL)
		if err != nil {
			return rep, err
		}
		if after.Connections > before.Connections {
			rep.Disturbed++
		}
		rep.Retried = after.Retried
		cfg.Logf("close %d of %d: the load has opened %d connections", i+1, cfg.Closes, after.Connections)
	}
	if rep.Final, err = l.readings(ctx); err != nil {
		return rep, err
	}
	rep.Ran = true
	return rep, nil
}

// brokerVersion names the broker behind the management API, or says why
// it cannot.
func brokerVersion(ctx context.Context, managementURL string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var o struct {
		Version string `json:"rabbitmq_version"`
		Erlang  string `json:"erlang_version"`
	}
	if err := brokertest.GetJSON(ctx, managementURL, "/api/overview", &o); err != nil {
		return fmt.Sprintf("a broker whose version is unknown (%v)", err)
	}
	return fmt.Sprintf("RabbitMQ %s, Erlang %s", o.Version, o.Erlang)
}

// load is the standing load's process.
type load struct {
	cmd      *exec.Cmd
	debugURL string
	stderr   string // its path
	exited   chan struct{}
	waitErr  error // once exited is closed

	mu    sync.Mutex
	count int
	last  Line
	bad   []string
}

var debugAt = regexp.MustCompile(`debug at (http://\S+)/debug/vars`)

// start launches the load, until a signal (ACEMQ_EXAMPLE_SECONDS=0), and
// waits for its debug address.
func start(cfg Config) (*load, error) {
	l := &load{stderr: filepath.Join(cfg.Dir, "standing-load.stderr"), exited: make(chan struct{})}
	errFile, err := os.Create(l.stderr)
	if err != nil {
		return nil, err
	}
	l.cmd = exec.Command(cfg.Bin, "-broker", cfg.URL, "-name", cfg.Name, "-debug", "127.0.0.1:0", "-interval", spacing.String())
	l.cmd.Env = append(os.Environ(), "ACEMQ_EXAMPLE_SECONDS=0")
	stdout, err := l.cmd.StdoutPipe()
	if err != nil {
		errFile.Close()
		return nil, err
	}
	stderr, err := l.cmd.StderrPipe()
	if err != nil {
		errFile.Close()
		return nil, err
	}
	if err := l.cmd.Start(); err != nil {
		errFile.Close()
		return nil, err
	}
	debug := make(chan string, 1)
	var pipes sync.WaitGroup
	pipes.Go(func() { l.readLines(stdout) })
	pipes.Go(func() { watchStderr(stderr, errFile, debug) })
	go func() {
		pipes.Wait() // Wait closes the pipes: read them to their end first
		l.waitErr = l.cmd.Wait()
		errFile.Close()
		close(l.exited)
	}()
	select {
	case l.debugURL = <-debug:
		return l, nil
	case <-l.exited:
		return nil, fmt.Errorf("the load exited at its start: %v\n%s", l.waitErr, tail(l.stderr))
	case <-time.After(startLimit):
		l.stop()
		return nil, fmt.Errorf("the load did not say its debug address within %v\n%s", startLimit, tail(l.stderr))
	}
}

// readLines keeps the count of the load's JSON lines and the last one,
// and the first few lines that are not its JSON.
func (l *load) readLines(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var line Line
		err := json.Unmarshal(sc.Bytes(), &line)
		l.mu.Lock()
		if err != nil {
			if len(l.bad) < 3 {
				l.bad = append(l.bad, sc.Text())
			}
		} else {
			l.count, l.last = l.count+1, line
		}
		l.mu.Unlock()
	}
}

func (l *load) lines() (int, Line, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.count, l.last, l.bad
}

// watchStderr copies the load's stderr to f, and sends its debug address
// on debug when it says it.
func watchStderr(r io.Reader, f *os.File, debug chan<- string) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fmt.Fprintln(f, sc.Text())
		if m := debugAt.FindStringSubmatch(sc.Text()); m != nil {
			select {
			case debug <- m[1]:
			default:
			}
		}
	}
}

// warm waits until the load has consumed a message and used the ladder.
func (l *load) warm(ctx context.Context) error {
	deadline := time.Now().Add(startLimit)
	for {
		vars, err := readVars(ctx, l.debugURL)
		if err != nil {
			return err
		}
		_, last, _ := l.lines()
		if last.Consumed > 0 && vars.Retried > 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the load consumed %d messages and failed %d on purpose in its first %v: want some of each\n%s",
				last.Consumed, vars.Retried, startLimit, tail(l.stderr))
		}
		if err := l.wait(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// readings takes Readings readings, spacing apart.
func (l *load) readings(ctx context.Context) ([]Reading, error) {
	var rs []Reading
	for i := range Readings {
		if i > 0 {
			if err := l.wait(ctx, spacing); err != nil {
				return rs, err
			}
		}
		r, err := read(ctx, l.cmd.Process.Pid, l.debugURL)
		if err != nil {
			return rs, fmt.Errorf("reading the load: %w", err)
		}
		rs = append(rs, r)
	}
	return rs, nil
}

// wait lets d pass, unless the load exits or ctx ends first.
func (l *load) wait(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-l.exited:
		return fmt.Errorf("the load exited while it should run: %v\n%s", l.waitErr, tail(l.stderr))
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stop sends the load SIGTERM and waits for it to exit; it returns "" when
// it exited 0, else how it ended and its stderr's end.
func (l *load) stop() string {
	_ = l.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-l.exited:
	case <-time.After(stopLimit):
		_ = l.cmd.Process.Kill()
		<-l.exited
		return fmt.Sprintf("did not exit within %v of SIGTERM; killed\n%s", stopLimit, tail(l.stderr))
	}
	if l.waitErr != nil {
		return fmt.Sprintf("%v\n%s", l.waitErr, tail(l.stderr))
	}
	return ""
}

// tail is the end of the file at path, for an error.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return "the load's stderr:\n" + string(b)
}

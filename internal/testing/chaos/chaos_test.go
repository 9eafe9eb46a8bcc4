package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/internal/testing/brokertest"
)

// TestChaosShort runs every scenario briefly (3 kills, 2 forced closes) in
// the normal `make test`; it fails on any lost or misplaced message.
func TestChaosShort(t *testing.T) {
	brokertest.URL(t) // skip (or fail under CI) before building when there is no broker
	bin := buildConsumer(t)
	scenarios := []struct {
		name   string
		faults int
	}{{Kill, 3}, {Close, 2}}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			runScenario(t, bin, sc.name, sc.faults, time.Second, 45*time.Second)
		})
	}
}

// restartBroker stops the node with `bash scripts/rabbitmq.sh stop` (a clean
// rabbitmqctl stop) and starts it again with `bash scripts/rabbitmq.sh`, in
// this process's environment (RABBITMQ_NODENAME and the rest name the node,
// its ports and its data directory, so the data survives).
func restartBroker(ctx context.Context) error {
	if _, err := script(ctx, "scripts/rabbitmq.sh", "stop"); err != nil {
		return err
	}
	_, err := script(ctx, "scripts/rabbitmq.sh", "start")
	return err
}

// script runs a script of the repository with bash, from its root, and
// returns its standard output; its standard error goes into the error.
func script(ctx context.Context, path string, args ...string) (string, error) {
	return scriptEnv(ctx, nil, path, args...)
}

// scriptEnv is script with env (NAME=VALUE) added to this process's
// environment.
func scriptEnv(ctx context.Context, env []string, path string, args ...string) (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", append([]string{path}, args...)...)
	cmd.Dir, cmd.Stderr, cmd.Env = root, &stderr, append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("bash %s %s: %w\n%s", path, strings.Join(args, " "), err, stderr.Bytes())
	}
	return string(out), nil
}

// repoRoot is the nearest directory above the working directory (the
// package's, under go test) that holds go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		// The repository's root holds the scripts; the harness's own go.mod
		// is a nested module's.
		if _, err := os.Stat(filepath.Join(dir, "scripts", "rabbitmq.sh")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no scripts/rabbitmq.sh above the working directory")
		}
		dir = parent
	}
}

func buildConsumer(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := Build(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// newAlarm makes a Config.Alarm. Without the chaos tag it makes none: an
// alarm blocks every publisher on the node, so only the tagged tests, which
// run alone, may raise one.
var newAlarm = func() func(ctx context.Context, on bool) error { return nil }

func runScenario(t *testing.T, bin, scenario string, faults int, gap, quiet time.Duration) {
	name := brokertest.UniqueName(t, "acemq.chaos")
	runConfig(t, Config{
		URL: brokertest.URL(t), Queue: name, Scenario: scenario, Faults: faults, Gap: gap, Quiet: quiet,
		ConsumerBin: bin, Name: name,
		ManagementURL: brokertest.ManagementURL(),
		RestartBroker: restartBroker,
		Alarm:         newAlarm(),
	}, noLoss)
}

// What a run may lose.
type verdict int

const (
	// noLoss fails the test on any lost, misplaced or unsettled message.
	noLoss verdict = iota
	// rungLoss is for contract rungs, which RabbitMQ dead-letters at most
	// once: messages lost on their way through a rung are expected, and
	// named in the test's output, not failures; anything else (a lost
	// message that never waited on a rung, a misplaced or unsettled one)
	// fails the test.
	rungLoss
)

// runConfig runs cfg (in cfg.Dir, or a fresh directory; logging to t), prints its
// report and fails t as v says.
func runConfig(t *testing.T, cfg Config, v verdict) Report {
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	dir := cfg.Dir
	cfg.Logf = t.Logf
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		dumpStderr(t, dir)
		t.Fatal(err)
	}
	fmt.Print(rep.String())
	if rep.Confirmed == 0 {
		t.Errorf("nothing was confirmed: the run proved nothing")
	}
	switch {
	case rep.OK():
	case v == rungLoss && rep.OKButRungHops():
		// Expected, and said so where it shows.
		msg := fmt.Sprintf("EXPECTED LOSS with %s rungs: %d of %d confirmed messages lost, every one on its way home from a rung "+
			"(RabbitMQ dead-letters from a classic queue at most once); by rung hops %v; confirmed %s",
			rep.Rungs, len(rep.Lost), rep.Confirmed, rep.LostByHops, strings.Join(rep.LostByFault, "; "))
		fmt.Println(msg)
		t.Log(msg)
	default:
		dumpStderr(t, dir)
		t.Errorf("messages lost, misplaced or unsettled:\n%s", rep)
	}
	return rep
}

func dumpStderr(t *testing.T, dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() == "accepted.log" || e.Name() == EventsFile {
			continue
		}
		b, _ := os.ReadFile(dir + "/" + e.Name())
		b = dropStats(b)
		if len(b) > 4000 {
			b = b[len(b)-4000:]
		}
		t.Logf("%s:\n%s", e.Name(), b)
	}
}

// dropStats removes the consumer's stats lines (ten a second), keeping the
// last one, so that the warnings around them fit in the dump.
func dropStats(b []byte) []byte {
	var out, last []byte
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("stats ")) {
			last = line
			continue
		}
		out = append(out, line...)
	}
	return append(out, last...)
}

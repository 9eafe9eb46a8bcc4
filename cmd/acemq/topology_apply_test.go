package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/transport"
)

// On the test broker: apply refuses a topology with a queue declared
// otherwise and declares nothing; --dry-run declares nothing; apply
// declares the rest, after which diff finds the broker in sync.
func TestTopologyApplyOnBroker(t *testing.T) {
	url := brokertest.URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := connect(ctx, url, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tr := conn.Transport()
	clash, fresh := brokertest.UniqueName(t, "cli-apply"), brokertest.UniqueName(t, "cli-apply")
	t.Cleanup(func() {
		for _, q := range []string{clash, fresh, fresh + ".dlq", fresh + ".parked", fresh + ".retry.1m"} {
			_, _ = tr.DeleteQueue(context.Background(), q)
		}
	})
	if err := tr.DeclareQueue(ctx, transport.Queue{Name: clash, Type: transport.Classic, Durable: true,
		Arguments: transport.Table{"x-max-length": int64(5)}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, yaml string) string {
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}
	queue := fmt.Sprintf("{name: %s, type: classic, deadLetter: true, retry: 'exponential(3, 1m, 1m)'}", fresh)
	clashing := write("clashing.yaml", fmt.Sprintf("queues: [{name: %s, type: classic}, %s]\n", clash, queue))
	clean := write("clean.yaml", fmt.Sprintf("queues: [%s]\n", queue))
	flags := []string{"--url", url, "--management-url", brokertest.ManagementURL()}
	declared := func() bool {
		_, err := tr.InspectQueue(ctx, fresh)
		if err != nil && !errors.Is(err, transport.ErrNotFound) {
			t.Fatal(err)
		}
		return err == nil
	}

	r := run(t, "", append([]string{"topology", "apply", "-f", clashing}, flags...)...)
	if r.code != exitDrift || !strings.HasPrefix(r.stdout, "refused: 1 declaration ") || !strings.Contains(r.stdout, "queue-drift: queue "+clash) {
		t.Errorf("apply with a clash: exit %d, stderr %q, stdout:\n%s", r.code, r.stderr, r.stdout)
	}
	if declared() {
		t.Errorf("the refused apply declared %s", fresh)
	}

	r = run(t, "", append([]string{"topology", "apply", "-f", clean, "--dry-run"}, flags...)...)
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "dry run: ") || !strings.Contains(r.stdout, "missing: queue "+fresh+"\n") {
		t.Errorf("--dry-run: exit %d, stderr %q, stdout:\n%s", r.code, r.stderr, r.stdout)
	}
	if declared() {
		t.Errorf("--dry-run declared %s", fresh)
	}

	r = run(t, "", append([]string{"topology", "apply", "-f", clean}, flags...)...)
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "applied: ") || !declared() {
		t.Errorf("apply: exit %d, stderr %q, stdout:\n%s", r.code, r.stderr, r.stdout)
	}
	// The management API may lag a moment behind the declarations.
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		r = run(t, "", append([]string{"topology", "diff", "-f", clean}, flags...)...)
		if r.code == exitOK || time.Now().After(deadline) {
			break
		}
	}
	if r.code != exitOK {
		t.Errorf("diff after apply: exit %d, stdout:\n%s", r.code, r.stdout)
	}
	yaml, err := os.ReadFile(clean)
	if err != nil {
		t.Fatal(err)
	}
	r = run(t, string(yaml), append([]string{"topology", "diff", "-f", "-"}, flags...)...)
	if r.code != exitOK || !strings.HasSuffix(r.stdout, "declarations of the standard input\n") {
		t.Errorf("diff -f - after apply: exit %d, stderr %q, stdout:\n%s", r.code, r.stderr, r.stdout)
	}
}

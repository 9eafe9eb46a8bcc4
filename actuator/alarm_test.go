//go:build chaos

package actuator_test

// A real memory alarm blocks every publisher on the node, so this test is
// kept out of `go test ./...` by the chaos tag: `make actuator-alarm`
// runs it, after the rest of a part of `make test`.

import (
	"context"
	"errors"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
)

// ctl runs rabbitmqctl on the test node through scripts/rabbitmq.sh.
func ctl(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{"scripts/rabbitmq.sh", "ctl"}, args...)...)
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("rabbitmqctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// During a real memory alarm, /acemq-health and /readyz answer 200, up,
// with the family's sentence and RabbitMQ's reason; once it clears, up
// and not blocked.
func TestHealthDuringAMemoryAlarm(t *testing.T) {
	conn, err := acemq.Connect(t.Context(), brokertest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	queue := brokertest.UniqueName(t, "alarm")
	if err := (acemq.Topology{Queues: []acemq.QueueSpec{{Name: queue}}}).Apply(t.Context(), conn); err != nil {
		t.Fatal(err)
	}
	pub := acemqtest.NewPublisher[string](t, conn, "")
	base := serve(t, conn, nil)

	previous := ctl(t, "eval", "vm_memory_monitor:get_vm_memory_high_watermark().")
	ctl(t, "set_vm_memory_high_watermark", "0.0000001")
	cleared := false
	clear := func() {
		if !cleared {
			cleared = true
			ctl(t, "set_vm_memory_high_watermark", previous)
		}
	}
	t.Cleanup(clear)

	// RabbitMQ tells a connection it is blocked once it publishes, after
	// the alarm has reached it.
	deadline := time.Now().Add(time.Minute)
	for !conn.State().Blocked {
		short, cancel := context.WithTimeout(t.Context(), time.Second)
		err := pub.Publish(short, queue, "during the alarm")
		cancel()
		if err != nil && !errors.Is(err, acemq.ErrBlocked) {
			t.Fatalf("a publish as the alarm rises: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the connection was not blocked within a minute of the alarm")
		}
	}
	reason := conn.State().BlockedReason
	if reason == "" {
		t.Error("RabbitMQ gave no reason for the block")
	}
	start := time.Now()
	wantBlocked(t, base, blockedSentence+": "+reason, reason)
	t.Logf("blocked (%q): /acemq-health and /readyz answered in %s", reason, time.Since(start))

	clear()
	deadline = time.Now().Add(time.Minute)
	for {
		r := do(t, http.MethodGet, base+"/acemq-health")
		h := decode[familyHealth](t, r)
		if r.code == http.StatusOK && h.Status == "up" && string(h.Parts["blocked"]) == "false" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/acemq-health a minute after the alarm cleared: %d %s, want up and not blocked", r.code, r.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := pub.Publish(t.Context(), queue, "after the alarm"); err != nil {
		t.Errorf("a publish after the alarm: %v", err)
	}
}

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/topologyfile"
)

// Errors exit 2, say what went wrong on stderr and never show a password.
func TestTopologyDiffErrors(t *testing.T) {
	unreachable := "http://admin:hunter2@127.0.0.1:1"
	tests := []struct {
		args       []string
		stderrHead string
	}{
		{[]string{"topology", "diff", "-f", "testdata/missing.yaml"}, "acemq: topology file: open "},
		{[]string{"topology", "diff", "-f", "testdata/unknown-key.yaml"}, "acemq: topology file "},
		{[]string{"topology", "diff", "-f", "testdata/invalid.yaml"}, "acemq: invalid topology\n  - "},
		{[]string{"topology", "diff", "-f", reference, "--management-url", unreachable}, `acemq: listing the exchanges of vhost "/" at http://127.0.0.1:1 through the management API: `},
		{[]string{"topology", "diff", "-f", reference, "--management-url", unreachable, "--json"}, "acemq: listing the exchanges "},
		{[]string{"topology", "diff", "-f", reference, "--url", "amqp://u:hunter2@host/\x7f"}, "acemq: the AMQP URL must look like "},
		{[]string{"topology", "diff", "-f", reference, "--management-url", "ftp://u:hunter2@host"}, "acemq: the management URL must look like "},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args[3:], " "), func(t *testing.T) {
			r := run(t, "", tt.args...)
			if r.code != exitFailure || r.stdout != "" {
				t.Errorf("exit %d, stdout %q; want exit 2 and nothing", r.code, r.stdout)
			}
			if !strings.HasPrefix(r.stderr, tt.stderrHead) || strings.Contains(r.stderr, "hunter2") || strings.Contains(r.stderr, "Usage:") {
				t.Errorf("stderr %q, want it to start with %q, without the password or usage", r.stderr, tt.stderrHead)
			}
		})
	}
	if r := run(t, "", "topology", "diff"); r.code != exitFailure || !strings.HasPrefix(r.stderr, "acemq: required flag") {
		t.Errorf("without -f: exit %d, stderr %q", r.code, r.stderr)
	}
}

// On the test broker: drift exits 1 and lists it, in text and JSON; once
// the topology is applied, diff exits 0.
func TestTopologyDiffOnBroker(t *testing.T) {
	url := brokertest.URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	exchange := brokertest.UniqueName(t, "cli-diff")
	queue := brokertest.UniqueName(t, "cli-diff")
	file := filepath.Join(t.TempDir(), "topology.yaml")
	yaml := fmt.Sprintf("exchanges: [{name: %s, type: fanout}]\nqueues: [{name: %s, type: classic, bindings: [{exchange: %s}]}]\n", exchange, queue, exchange)
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"topology", "diff", "-f", file, "--url", url, "--management-url", brokertest.ManagementURL()}

	r := run(t, "", args...)
	if r.code != exitDrift || r.stderr != "" || !strings.HasPrefix(r.stdout, "drift: ") || !strings.Contains(r.stdout, "missing-queue: queue "+queue) {
		t.Errorf("before apply: exit %d, stderr %q, stdout:\n%s", r.code, r.stderr, r.stdout)
	}
	r = run(t, "", append(args, "--json")...)
	out := decodeJSON(t, r.stdout)
	if r.code != exitDrift || out["inSync"] != false || out["vhost"] != "/" || strings.Contains(r.stdout, "guest@") {
		t.Errorf("before apply, --json: exit %d, stdout:\n%s", r.code, r.stdout)
	}
	var got []string
	for _, f := range out["findings"].([]any) {
		f := f.(map[string]any)
		got = append(got, fmt.Sprint(f["kind"], " ", f["object"]))
	}
	want := []string{"missing-exchange exchange " + exchange, "missing-queue queue " + queue,
		fmt.Sprintf("missing-binding binding %s -> %s under \"\"", exchange, queue)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("findings\n got %q\nwant %q", got, want)
	}

	top, err := topologyfile.Read(file)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := connect(ctx, url, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := top.Apply(ctx, conn); err != nil {
		t.Fatal(err)
	}
	// The management API may lag a moment behind the declarations.
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		r = run(t, "", append(args, "--json")...)
		if r.code == exitOK || time.Now().After(deadline) {
			break
		}
	}
	out = decodeJSON(t, r.stdout)
	if r.code != exitOK || out["inSync"] != true || !reflect.DeepEqual(out["findings"], []any{}) {
		t.Errorf("after apply: exit %d, stderr %q, stdout:\n%s", r.code, r.stderr, r.stdout)
	}
	if r = run(t, "", args...); r.code != exitOK || !strings.HasPrefix(r.stdout, "in sync: ") {
		t.Errorf("after apply: exit %d, stdout %q", r.code, r.stdout)
	}
}

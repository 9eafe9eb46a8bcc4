//go:build chaos

package soak

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/acemq-go/acemq/internal/testing/brokertest"
)

// TestChaosSoak is the family's soak of examples/standing-load, scaled to
// fit make chaos (make chaos-soak): 20 closes of its connections 5s
// apart by default, ACEMQ_SOAK_CLOSES and ACEMQ_SOAK_EVERY for others
// (the family's own: 240, 15s). It prints the report, and fails on each of
// the family's allowances the load exceeds, on counters that did not move,
// on no close disturbing it, and on any confirmed message not consumed.
func TestChaosSoak(t *testing.T) {
	url := brokertest.URL(t) // fail (or skip outside CI) before building when there is no broker
	closes, every := soakScale(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	bin, err := Build(ctx, t.TempDir())
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rep, err := Run(context.Background(), Config{Bin: bin, URL: url, ManagementURL: brokertest.ManagementURL(),
		Name: "acemq-soak-" + strconv.Itoa(os.Getpid()), Closes: closes, Every: every, Dir: dir, Logf: t.Logf})
	fmt.Print(rep.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Problems() {
		t.Error(p)
	}
}

// soakScale is ACEMQ_SOAK_CLOSES (20) closes, ACEMQ_SOAK_EVERY (5s) apart.
func soakScale(t *testing.T) (int, time.Duration) {
	closes, every := 20, 5*time.Second
	if v := os.Getenv("ACEMQ_SOAK_CLOSES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("ACEMQ_SOAK_CLOSES=%q: want a number of closes, at least 1", v)
		}
		closes = n
	}
	if v := os.Getenv("ACEMQ_SOAK_EVERY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("ACEMQ_SOAK_EVERY=%q: want a duration such as 15s", v)
		}
		every = d
	}
	return closes, every
}

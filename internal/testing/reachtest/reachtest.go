// Package reachtest is what brokertest and dbtest share in finding a test
// server: whether one answers at a URL (asked once per URL and test
// binary), and a test that cannot reach its server skipped on a developer
// machine but failed under CI (CI=true), where a skip would hide it.
package reachtest

import (
	"net/url"
	"os"
	"sync"
	"testing"
)

// InCI reports whether the tests run under CI (CI=true).
func InCI() bool { return os.Getenv("CI") == "true" }

var reach struct {
	sync.Mutex
	checked map[string]error
}

// Probe is probe(u), asked once per u: the tests of a binary that reach
// for the same server wait on one answer, not one each.
func Probe(u string, probe func(string) error) error {
	reach.Lock()
	defer reach.Unlock()
	if reach.checked == nil {
		reach.checked = map[string]error{}
	}
	err, done := reach.checked[u]
	if !done {
		err = probe(u)
		reach.checked[u] = err
	}
	return err
}

// Unavailable fails t with msg under CI and skips it elsewhere; kind names
// the tests ("broker", "database") in the failure.
func Unavailable(t testing.TB, kind, msg string) {
	t.Helper()
	if InCI() {
		t.Fatalf("%s (CI=true: a %s test must not skip)", msg, kind)
	}
	t.Skip(msg)
}

// Redact is u with its password hidden, for a message.
func Redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparseable URL)"
	}
	return p.Redacted()
}

package main

import (
	"strings"
	"testing"
)

// Beyond loopback without credentials the console refuses to start, before
// it connects to anything (the URL names no broker).
func TestConsoleRefusesANonLoopbackListenerWithoutCredentials(t *testing.T) {
	t.Setenv(consoleTokenEnv, "")
	t.Setenv(consoleUserEnv, "")
	t.Setenv(consolePasswordEnv, "")
	for _, listen := range []string{"0.0.0.0:0", ":0", "192.0.2.1:8080"} {
		r := run(t, "", "console", "--listen", listen, "--url", "amqp://guest:guest@192.0.2.1:1/")
		if r.code != exitFailure || !strings.Contains(r.stderr, "it needs credentials: set ACEMQ_CONSOLE_TOKEN") {
			t.Errorf("console --listen %s: exit %d\n%s%s", listen, r.code, r.stdout, r.stderr)
		}
	}
	t.Setenv(consoleUserEnv, "op")
	if r := run(t, "", "console", "--listen", "0.0.0.0:0"); r.code != exitFailure || !strings.Contains(r.stderr, "needs both ACEMQ_CONSOLE_USER and ACEMQ_CONSOLE_PASSWORD") {
		t.Errorf("console with a user and no password: exit %d\n%s", r.code, r.stderr)
	}
}

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

// Credentials over plain HTTP beyond loopback are refused at start, with
// the fixes named; a certificate without its key too.
func TestConsoleRefusesCredentialsOverPlainHTTP(t *testing.T) {
	t.Setenv(consoleTokenEnv, "the-token")
	t.Setenv(consoleUserEnv, "")
	t.Setenv(consolePasswordEnv, "")
	r := run(t, "", "console", "--listen", "0.0.0.0:0", "--url", "amqp://guest:guest@192.0.2.1:1/")
	for _, want := range []string{"over plain HTTP", "--tls-cert and --tls-key", "listen on 127.0.0.1 behind a TLS-terminating proxy", "--insecure-http"} {
		if r.code != exitFailure || !strings.Contains(r.stderr, want) {
			t.Errorf("console --listen 0.0.0.0:0 with a token: exit %d, want an error saying %q\n%s", r.code, want, r.stderr)
		}
	}
	r = run(t, "", "console", "--listen", "0.0.0.0:0", "--tls-cert", "cert.pem", "--url", "amqp://guest:guest@192.0.2.1:1/")
	if r.code != exitFailure || !strings.Contains(r.stderr, "--tls-cert and --tls-key go together") {
		t.Errorf("console --tls-cert without --tls-key: exit %d\n%s", r.code, r.stderr)
	}
	if r := run(t, "", "console", "--max-import-mib", "0"); r.code != exitFailure || !strings.Contains(r.stderr, "--max-import-mib 0") {
		t.Errorf("console --max-import-mib 0: exit %d\n%s", r.code, r.stderr)
	}
}

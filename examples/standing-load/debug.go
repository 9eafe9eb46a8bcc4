package main

import (
	"expvar"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof" // the debug address's /debug/pprof/
	"os"
	"runtime"

	"github.com/acemq-go/acemq"
)

// serveDebug serves net/http/pprof and expvar (/debug/vars, with the
// load's "standingLoad") at addr, and says where on stderr.
func serveDebug(addr string, t *tally, conns ...*acemq.Conn) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("-debug %s: %w", addr, err)
	}
	expvar.Publish("standingLoad", expvar.Func(func() any {
		e := t.extra()
		e.Goroutines = runtime.NumGoroutine()
		for _, c := range conns {
			e.Connections += c.State().Connects
		}
		return e
	}))
	fmt.Fprintf(os.Stderr, "standing-load: debug at http://%s/debug/vars\n", ln.Addr())
	go func() {
		// It serves until the process exits.
		_ = http.Serve(ln, nil)
	}()
	return nil
}

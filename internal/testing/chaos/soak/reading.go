package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/procfs"
)

// Reading is what the soak reads of the load's process: from outside, as
// the family's soak does (/proc/PID: open descriptors, threads, resident
// memory), and from the load's opt-in debug address (its goroutines, and
// the connections its Conns have opened).
type Reading struct {
	Descriptors int
	Threads     int
	RSS         uint64 // bytes
	Goroutines  int
	Connections int
}

// debugVars is the load's "standingLoad" of /debug/vars.
type debugVars struct {
	Retried     int64 `json:"retried"`
	Goroutines  int   `json:"goroutines"`
	Connections int   `json:"connections"`
}

// read takes a reading of process pid, whose debug address is debugURL
// (http://HOST:PORT).
func read(ctx context.Context, pid int, debugURL string) (Reading, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return Reading{}, err
	}
	status, err := p.NewStatus()
	if err != nil {
		return Reading{}, err
	}
	stat, err := p.Stat()
	if err != nil {
		return Reading{}, err
	}
	fds, err := p.FileDescriptorsLen()
	if err != nil {
		return Reading{}, err
	}
	// After /proc: the request to the debug address holds a descriptor
	// of the load's while it lasts.
	vars, err := readVars(ctx, debugURL)
	if err != nil {
		return Reading{}, err
	}
	return Reading{Descriptors: fds, Threads: stat.NumThreads, RSS: status.VmRSS,
		Goroutines: vars.Goroutines, Connections: vars.Connections}, nil
}

// noKeepAlive reads the debug address without keeping a connection open,
// which would hold a descriptor and a goroutine of the load's.
var noKeepAlive = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

func readVars(ctx context.Context, debugURL string) (debugVars, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, debugURL+"/debug/vars", nil)
	if err != nil {
		return debugVars{}, err
	}
	resp, err := noKeepAlive.Do(req)
	if err != nil {
		return debugVars{}, fmt.Errorf("reading the load's debug address: %w", err)
	}
	defer resp.Body.Close()
	var all struct {
		Load debugVars `json:"standingLoad"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&all); err != nil {
		return debugVars{}, fmt.Errorf("decoding the load's /debug/vars: %w", err)
	}
	return all.Load, nil
}

// median is the reading of each figure's median, figure by figure.
func median(rs []Reading) Reading {
	pick := func(f func(Reading) int) int {
		v := make([]int, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return Reading{
		Descriptors: pick(func(r Reading) int { return r.Descriptors }),
		Threads:     pick(func(r Reading) int { return r.Threads }),
		RSS:         uint64(pick(func(r Reading) int { return int(r.RSS) })),
		Goroutines:  pick(func(r Reading) int { return r.Goroutines }),
		Connections: pick(func(r Reading) int { return r.Connections }),
	}
}

func (r Reading) String() string {
	return fmt.Sprintf("%d fds, %d threads, %s, %d goroutines", r.Descriptors, r.Threads, mib(r.RSS), r.Goroutines)
}

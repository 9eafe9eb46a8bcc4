package harness

import (
	"runtime"
	"syscall"
	"time"
)

// usage is what the process has spent so far: CPU time (user and system,
// from getrusage) and heap objects allocated (runtime.MemStats). A run's
// cost is the difference across it; per message, it stays comparable on a
// noisy, shared machine where wall time does not, since the broker runs in
// a process of its own.
type usage struct {
	cpu     time.Duration
	mallocs uint64
}

func currentUsage() usage {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru) // cannot fail for RUSAGE_SELF
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return usage{cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), mallocs: ms.Mallocs}
}

func (u usage) since(before usage) usage {
	return usage{cpu: u.cpu - before.cpu, mallocs: u.mallocs - before.mallocs}
}

// measure starts a run's clock and its count of CPU and allocations (after
// a GC: the garbage of earlier runs is not this one's); the function it
// returns stops them, into a Sample.
func measure() func() Sample {
	runtime.GC()
	before, start := currentUsage(), time.Now()
	return func() Sample {
		elapsed := time.Since(start)
		spent := currentUsage().since(before)
		return Sample{Elapsed: elapsed, CPU: spent.cpu, Allocs: spent.mallocs}
	}
}

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

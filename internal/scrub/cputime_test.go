package scrub

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime returns the CPU time (user and system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU runs body b.N times and reports, besides the wall time, the CPU
// time per operation: on a machine shared with other work, the wall time
// includes waiting for a processor, the CPU time does not.
func reportCPU(b *testing.B, body func()) {
	start := cpuTime()
	for b.Loop() {
		body()
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

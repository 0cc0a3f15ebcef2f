package cli

import (
	"os"
	"runtime/debug"
)

// GC settings of `runner run`, unless GOGC or GOMEMLIMIT say otherwise.
//
// An iteration allocates a few times the size of tree.json (reading it,
// copying it, encoding it) while the live heap stays about one tree, so
// with Go's default (GOGC=100) the collector runs several times per
// iteration and takes a fifth of the runner's own time. Letting the heap
// grow to five times the live data before collecting halves that; the
// soft memory limit makes the collector work harder instead once the
// process approaches it, so huge trees do not pay for the setting with
// five times their memory. BENCHMARKS.md has the figures.
const (
	runGCPercent   = 400
	runMemoryLimit = 768 << 20
)

// tuneGCForRun applies the GC settings of a long `runner run`.
func tuneGCForRun() {
	if _, ok := os.LookupEnv("GOGC"); !ok {
		debug.SetGCPercent(runGCPercent)
	}
	if _, ok := os.LookupEnv("GOMEMLIMIT"); !ok {
		debug.SetMemoryLimit(runMemoryLimit)
	}
}

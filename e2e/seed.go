package e2e

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"
)

// Seed returns the random source of a test's choices, its seed logged:
// RUNNER_CRASH_SEED=N replays them.
func Seed(t testing.TB) (*rand.Rand, uint64) {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("RUNNER_CRASH_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("seed %d (RUNNER_CRASH_SEED replays it)", seed)
	return rand.New(rand.NewPCG(seed, seed)), seed
}

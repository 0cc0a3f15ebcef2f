package crash

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/runner-cli/runner/e2e"
)

// BenchmarkTimeToSilence measures the time from the runner's death by
// SIGKILL to the end of the last process of the iteration (the agent or
// guard, a grandchild, a daemon that left the group, session and
// environment, its child, and their supervisor), polled every
// millisecond, with kill_grace = "1s". With ignore-term the daemon and
// its child ignore SIGTERM, so they end only at the SIGKILL after the
// grace period. The figures are the ms-mean and ms-max metrics (ns/op
// counts the whole run, setup included):
//
//	go test ./e2e/crash -run '^$' -bench TimeToSilence -benchtime 10x
func BenchmarkTimeToSilence(b *testing.B) {
	const grace = time.Second
	for _, what := range []string{"agent", "guard"} {
		for _, ignoreTerm := range []bool{false, true} {
			name := what
			if ignoreTerm {
				name += "/ignore-term"
			}
			b.Run(name, func(b *testing.B) {
				var total, worst time.Duration
				for i := 0; i < b.N; i++ {
					pidFile := filepath.Join(b.TempDir(), "pids")
					script := strayScript(pidFile, ignoreTerm)
					var r *e2e.Repo
					if what == "agent" {
						r = silenceRepo(b, script, "", grace)
					} else {
						r = silenceRepo(b, doneAgent, script, grace)
					}
					pids, killed := killedMidway(b, r, pidFile)
					left, silent := untilSilent(pids, grace+10*time.Second)
					if len(left) > 0 {
						killPIDs(left)
						b.Fatalf("still running %s after the runner was killed: %v", silent.Sub(killed), left)
					}
					took := silent.Sub(killed)
					total += took
					worst = max(worst, took)
				}
				b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms-mean")
				b.ReportMetric(float64(worst.Microseconds())/1000, "ms-max")
			})
		}
	}
}

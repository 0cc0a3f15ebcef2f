package loop

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/proc"
	"github.com/runner-cli/runner/internal/state"
)

// interruptedAgent is what is known of the agent of an iteration whose
// runner stopped while it worked: how it ended and after how long, from
// the exit record its supervisor wrote when it reaped it
// (agent_exit.json), or else up to the last time it wrote to its log;
// never a made-up "exit 0 after 0s".
func interruptedAgent(o executor.Options, runDir string, started time.Time) *state.AgentMeta {
	a := &state.AgentMeta{Class: executor.ClassInterrupted, ExitCode: -1, LogTail: executor.LogTail(o, runDir)}
	if rec, err := proc.ReadExitRecord(filepath.Join(runDir, executor.ExitFileName)); err == nil {
		a.ExitCode, a.DurationMS = rec.Code, rec.TookMS
		switch {
		case rec.Signal != "":
			a.Error = fmt.Sprintf("the runner that started it stopped while it worked; it was stopped by %s after %s", rec.Signal, msString(rec.TookMS))
		default:
			a.Error = fmt.Sprintf("the runner that started it stopped while it worked; it exited with status %d after %s, its result unread", rec.Code, msString(rec.TookMS))
		}
		return a
	}
	a.Error = "the runner that started it stopped while it worked; its end was not recorded"
	if st, err := os.Stat(filepath.Join(runDir, executor.LogFileName)); err == nil && !started.IsZero() && st.ModTime().After(started) {
		a.DurationMS = st.ModTime().Sub(started).Milliseconds()
		a.Error += fmt.Sprintf(" (its output last changed %s after it started)", msString(a.DurationMS))
	}
	return a
}

func msString(ms int64) string {
	return (time.Duration(ms) * time.Millisecond).Round(100 * time.Millisecond).String()
}

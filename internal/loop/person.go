package loop

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/runbranch"
	"github.com/runner-cli/runner/internal/state"
)

// unrecorded is what the run knows of the iterations that worked in the
// run branch's own working tree with no attempt's ref holding what they
// did (runbranch.Unrecorded): those a runner that died left there, and
// the last one, when it was abandoned with `runner abandon`. Each one's
// while runs from its start to its agent's end (its exit record, which
// the supervisor writes once the agent is gone, even after its runner
// died), else its last output (its log files' last change; until now
// when they are gone), or to its abandonment, which stopped its agent;
// the tree its work was judged as, when it got that far, is the
// runner's.
func (r *Runner) unrecorded() runbranch.Unrecorded {
	var u runbranch.Unrecorded
	add := func(n int, from time.Time, m *state.Meta, abandoned bool) {
		s := runbranch.Span{From: from, To: from}
		logged := false
		// The supervisor writes the agent's exit record once it has
		// reaped it, after its runner died too: all the agent wrote, it
		// wrote before.
		for _, name := range []string{executor.LogFileName, executor.EventsFileName, executor.ExitFileName} {
			if st, err := os.Lstat(filepath.Join(r.p.RunDir(n), name)); err == nil {
				logged = true
				if st.ModTime().After(s.To) {
					s.To = st.ModTime()
				}
			}
		}
		if !logged && !abandoned {
			// Its logs are gone (an agent's `git clean`): its last output
			// is not known, and all since its start may be its own.
			s.To = time.Now()
		}
		if abandoned {
			// meta.json was last written when `runner abandon` stopped
			// its agent.
			if st, err := os.Lstat(state.MetaFile(r.p.RunDir(n))); err == nil && st.ModTime().After(s.To) {
				s.To = st.ModTime()
			}
		}
		u.Spans = append(u.Spans, s)
		if m != nil && m.JudgedTree != "" {
			u.Judged = append(u.Judged, m.JudgedTree)
		}
	}
	for _, in := range r.ledger.State().Flights() {
		if in.Slot == 0 {
			m, _ := state.LoadMeta(r.p.RunDir(in.Iteration))
			add(in.Iteration, in.StartedAt, m, false)
		}
	}
	if n := r.ledger.NextIteration() - 1; n > 0 {
		if m, err := state.LoadMeta(r.p.RunDir(n)); err == nil && m.Slot == 0 && m.Phase == state.PhaseAborted && strings.Contains(m.Note, AbandonNote) {
			add(n, m.StartedAt, m, true)
		}
	}
	return u
}

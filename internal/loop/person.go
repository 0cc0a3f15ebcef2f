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

// unrecorded are the whiles agents worked in the run branch's own working
// tree with no attempt's ref holding what they did (runbranch.Span): the
// iterations a runner that died left there, and the last one, when it was
// abandoned with `runner abandon`; each from its start to its agent's
// last output (its log files' last change).
func (r *Runner) unrecorded() []runbranch.Span {
	var spans []runbranch.Span
	for _, in := range r.ledger.State().Flights() {
		if in.Slot == 0 {
			spans = append(spans, r.spanOf(in.Iteration, in.StartedAt))
		}
	}
	if n := r.ledger.State().LastKnown(); n > 0 {
		if m, err := state.LoadMeta(r.p.RunDir(n)); err == nil && m.Slot == 0 && m.Phase == state.PhaseAborted && strings.Contains(m.Note, AbandonNote) {
			spans = append(spans, r.spanOf(n, m.StartedAt))
		}
	}
	return spans
}

// spanOf is iteration n's while, from its start.
func (r *Runner) spanOf(n int, from time.Time) runbranch.Span {
	s := runbranch.Span{From: from, To: from}
	for _, name := range []string{executor.LogFileName, executor.EventsFileName} {
		if st, err := os.Lstat(filepath.Join(r.p.RunDir(n), name)); err == nil && st.ModTime().After(s.To) {
			s.To = st.ModTime()
		}
	}
	return s
}

package loop

import (
	"path/filepath"
	"strings"

	"github.com/runner-cli/runner/internal/config"
	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/state"
)

// A done that did nothing (SPEC §20): with verify.empty_done = "fail", an
// attempt that says done but changed nothing, or whose every command
// failed, fails.

// emptyDone says whether meta's done is empty: it changed nothing
// (NoChange), or every command its agent ran failed (CommandsFailed, read
// from the events its CLI streamed). With verify.empty_done = "fail" the
// attempt then fails (failEmptyDone).
func (r *Runner) emptyDone(meta *state.Meta) bool {
	meta.CommandsFailed = executor.SummarizeEvents(filepath.Join(r.p.RunDir(meta.Iteration), executor.EventsFileName)).AllCommandsFailed()
	return (meta.NoChange || meta.CommandsFailed) && r.cfg.Verify.EmptyDone == config.EmptyDoneFail
}

// failEmptyDone fails meta's attempt, which said done and changed
// nothing, or whose every command failed (verify.empty_done = "fail").
func (r *Runner) failEmptyDone(meta *state.Meta) error {
	what := "changed nothing in the working tree"
	if !meta.NoChange {
		what = "every command it ran failed"
	}
	text := "The previous attempt said done but " + what + ", which verify.empty_done = \"fail\" does not accept. " +
		"Do the task's work; if it is already done, say so in the summary and answer status \"blocked\" for a person to check and skip it.\n"
	if err := fsutil.WriteFileAtomic(filepath.Join(r.p.RunDir(meta.Iteration), "failure.log"), []byte(text), 0o644); err != nil {
		return err
	}
	meta.Guard = state.GuardFail
	meta.Guards = []state.GuardMeta{{Name: state.EmptyDoneGuard, ExitCode: 1, Status: state.GuardFail, Error: "said done, but " + what + " (verify.empty_done = \"fail\")"}}
	return nil
}

// firstLine is the first line of s, without its "- ".
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimPrefix(line, "- ")
}

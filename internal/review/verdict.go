package review

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/runner-cli/runner/internal/config"
	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/outcome"
	"github.com/runner-cli/runner/internal/state"
)

// Wanted reports whether the iteration waits for a verdict:
// [review] is on, the agent ran cleanly and says done, the guards did not
// fail, and no verdict is recorded yet.
func Wanted(cfg *config.Config, meta *state.Meta) bool {
	return cfg.Review.Enabled && meta.Agent != nil && meta.Agent.Class == executor.ClassOK &&
		meta.AgentStatus == executor.StatusDone && meta.Guard != state.GuardFail &&
		(meta.Review == nil || meta.Review.Verdict == "") && meta.CostCap == nil
}

// coversNode reports whether the node id is the node at path (its ids
// joined by "/") or one of its ancestors.
func coversNode(path, id string) bool {
	for _, p := range strings.Split(path, "/") {
		if p == id {
			return true
		}
	}
	return false
}

// NoteRejection writes, for an iteration whose reviewer rejected the
// work, the reasons into its failure.log, which the next attempt's
// failure.md is made of (the run state's last_guard says fail). Written
// again when the outcome is recorded again after a crash.
func NoteRejection(cfg *config.Config, runDir string, meta *state.Meta) error {
	rv := meta.Review
	if rv == nil || rv.Verdict != executor.VerdictReject {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The guards passed, but the reviewer (%s) rejected the work of iteration %d", rv.Executor, meta.Iteration)
	if rv.Rejection > 0 {
		fmt.Fprintf(&b, " (rejection %d of %d before the task is blocked)", rv.Rejection, cfg.Review.MaxRejections)
	}
	b.WriteString(". Fix each of these:\n\n")
	for _, reason := range rv.Reasons {
		b.WriteString("- " + strings.ReplaceAll(strings.TrimSpace(reason), "\n", "\n  ") + "\n")
	}
	return fsutil.ReplaceFile(filepath.Join(runDir, "failure.log"), []byte(b.String()), 0o644, fsutil.NotSynced)
}

// Verdict is the verdict the outcome is decided with: "" without
// a review.
func Verdict(meta *state.Meta) string {
	if meta.Review == nil {
		return ""
	}
	return meta.Review.Verdict
}

// AfterRejection blocks a task at its review.max_rejections-th rejection
// (outcome.Rejected), given the fields outcome.Apply left.
func AfterRejection(cfg *config.Config, meta *state.Meta, f outcome.Fields) outcome.Fields {
	if meta.Outcome != state.OutcomeRejected || meta.Review == nil {
		return f
	}
	return outcome.Rejected(f, meta.Review.Rejection, cfg.Review.MaxRejections, meta.Review.Reasons)
}

package loop

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/runner-cli/runner/internal/config"
	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/textfmt"
)

// The judged tree (SPEC §20): before the guards run, what the agent left
// is taken as a git tree (meta.JudgedTree). The guards and the reviewer
// judge it, and the task's commit is that tree, never what the working
// tree holds after them (they run the agent's code). Work git cannot
// take in time (git.timeout) fails its attempt, naming the largest
// paths, and is discarded: an agent's output never stops the run.

// snapshotGuard names the failed result of work git could not take.
const snapshotGuard = "snapshot"

// takeJudgedTree takes the lane's working tree as the judged tree of
// meta's iteration. It reports false when git could not do it in time:
// the attempt then fails (meta.Guard, meta.Guards and failure.log say
// why, naming the largest paths) and the working tree is to be discarded
// (ck.unsnappable). Without git checkpoints there is nothing to take.
func (r *worker) takeJudgedTree(ctx context.Context, meta *state.Meta) (bool, error) {
	ck := r.ck
	if ck == nil {
		return true, nil
	}
	snap, err := ck.repo.Snapshot(ctx, ck.head, ck.runtime)
	if err == nil {
		meta.JudgedTree = snap.Tree
		meta.NoChange = len(snap.Paths) == 0
		return true, nil
	}
	if ctx.Err() != nil || !errors.Is(err, git.ErrTimeout) {
		return false, fmt.Errorf("take the work of iteration %d as a tree: %w", meta.Iteration, err)
	}
	return false, r.unsnappable(ctx, meta, err)
}

// emptyDone says whether meta's done is empty: it changed nothing
// (NoChange), or every command its agent ran failed (CommandsFailed, read
// from the events its CLI streamed). With verify.empty_done = "fail" the
// attempt then fails (failEmptyDone).
func (r *worker) emptyDone(meta *state.Meta) bool {
	meta.CommandsFailed = executor.SummarizeEvents(filepath.Join(r.p.RunDir(meta.Iteration), executor.EventsFileName)).AllCommandsFailed()
	return (meta.NoChange || meta.CommandsFailed) && r.cfg.Verify.EmptyDone == config.EmptyDoneFail
}

// failEmptyDone fails meta's attempt, which said done and changed
// nothing, or whose every command failed (verify.empty_done = "fail").
func (r *worker) failEmptyDone(meta *state.Meta) error {
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

// unsnappable fails meta's attempt, whose work git could not take as a
// tree (cause), and marks the lane's working tree to be discarded.
func (r *worker) unsnappable(ctx context.Context, meta *state.Meta, cause error) error {
	ck := r.ck
	ck.unsnappable = true
	what := r.largestPaths(ctx)
	text := fmt.Sprintf("git could not take the work of this attempt as a tree within git.timeout (%s): it is too large to judge or commit. "+
		"Nothing of it was kept, and the working tree was put back at the checkpoint.\n\nWhat the working tree held, largest first:\n%s\n"+
		"Keep generated data, downloads and build outputs out of the working tree (or list them in .gitignore); "+
		"if the task needs such files, answer status \"blocked\" and say so.\n", r.cfg.Git.Timeout.Duration, what)
	if err := fsutil.WriteFileAtomic(filepath.Join(r.p.RunDir(meta.Iteration), "failure.log"), []byte(text), 0o644); err != nil {
		return err
	}
	meta.Guard = state.GuardFail
	meta.Guards = []state.GuardMeta{{Name: snapshotGuard, ExitCode: 1, Status: state.GuardFail,
		Error: textfmt.OneLine("the work is too large for git to take as a tree within git.timeout: "+firstLine(what), 300)}}
	meta.Note = strings.TrimSpace(meta.Note + " the work was too large to take as a tree (git.timeout); discarded")
	r.log.Warn("git could not take the agent's work as a tree in time; the attempt fails and the work is discarded",
		"iteration", meta.Iteration, "node", meta.Node, "err", cause)
	fmt.Fprintf(r.opts.Notices, "runner: iteration %d left work git could not take as a tree within git.timeout (%s): the attempt fails and the work is discarded; largest: %s\n",
		meta.Iteration, r.cfg.Git.Timeout.Duration, inert.Line(firstLine(what)))
	return nil
}

// largestPaths describes the largest untracked files and the folders
// with the most of them, one per line; what git could not list is said.
func (r *worker) largestPaths(ctx context.Context) string {
	files, folders, err := r.ck.repo.LargestUntracked(ctx, 5, r.ck.runtime)
	if err != nil {
		return "- (the untracked files could not be listed: " + inert.Line(err.Error()) + ")\n"
	}
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "- %s (%s)\n", inert.Line(f.Path), humanBytes(f.Bytes))
	}
	for _, f := range folders {
		fmt.Fprintf(&b, "- %s (%d files, %s)\n", inert.Line(f.Path), f.Files, humanBytes(f.Bytes))
	}
	if b.Len() == 0 {
		return "- (no untracked file: the tracked files changed are too large)\n"
	}
	return b.String()
}

// firstLine is the first line of s, without its "- ".
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimPrefix(line, "- ")
}

// discardUnsnappable puts the lane's working tree back at its checkpoint
// without taking it as a tree (git.DiscardWork), after work git could
// not take in time.
func (r *worker) discardUnsnappable(ctx context.Context, meta *state.Meta) error {
	ck := r.ck
	if err := ck.repo.DiscardWork(ctx, ck.head, ck.runtime); err != nil {
		return fmt.Errorf("discard the work of iteration %d, too large to take as a tree: %w", meta.Iteration, err)
	}
	ck.unsnappable, ck.dirty = false, ""
	return nil
}

// humanBytes is n bytes as people read it: 64.0 GiB, 12.3 MiB, 800 B.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// judgedSnapshot takes the lane's working tree as a tree for the task's
// commit: the judged tree. When the working tree no longer holds it (the
// guards or the reviewer changed it, or left what git cannot take in
// time), it is put back at the judged tree first, what they left kept
// under refs/runner/kept/guards-<n> where git could take it.
func (r *worker) judgedSnapshot(ctx context.Context, meta *state.Meta) (git.Snapshot, error) {
	ck := r.ck
	snap, err := ck.repo.Snapshot(ctx, ck.head, ck.runtime)
	timedOut := errors.Is(err, git.ErrTimeout) && ctx.Err() == nil
	if meta.JudgedTree == "" || err == nil && snap.Tree == meta.JudgedTree || err != nil && !timedOut {
		return snap, err
	}
	var changed []string
	if !timedOut {
		changed, _ = ck.repo.ChangedPaths(ctx, meta.JudgedTree, snap.Tree)
		m := git.Message{Subject: fmt.Sprintf("what the judges of iteration %d left in the working tree", meta.Iteration),
			Body: "Task " + meta.Node + "'s commit is the tree its guards judged; this is the working tree after them."}
		if k, err := ck.repo.Keep(ctx, fmt.Sprintf("guards-%d", meta.Iteration), snap.Tree, ck.head, m); err == nil {
			meta.Note = strings.TrimSpace(meta.Note + " the guards changed the work after it was judged: what was judged lands, what they left is kept under " + git.KeptPrefix + fmt.Sprintf("guards-%d", meta.Iteration) + " (" + short(k) + ")")
		}
	} else {
		meta.Note = strings.TrimSpace(meta.Note + " the guards left what git cannot take in time: discarded, what was judged lands")
	}
	judged, err := ck.repo.Commit(ctx, meta.JudgedTree, ck.head, git.Message{Subject: fmt.Sprintf("the judged tree of iteration %d", meta.Iteration)})
	if err != nil {
		return git.Snapshot{}, err
	}
	if timedOut {
		err = ck.repo.DiscardWork(ctx, judged, ck.runtime)
	} else {
		err = ck.repo.ResetWorktree(ctx, judged, ck.runtime)
	}
	if err != nil {
		return git.Snapshot{}, fmt.Errorf("put %s back at the judged tree of iteration %d: %w", ck.repo.Top(), meta.Iteration, err)
	}
	r.warnChangedAfterJudged(meta, changed)
	return ck.repo.Snapshot(ctx, ck.head, ck.runtime)
}

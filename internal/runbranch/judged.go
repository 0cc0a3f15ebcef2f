package runbranch

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/testreport"
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

// TakeJudged takes the working tree as the judged tree of meta's
// iteration. It reports false when git could not do it in time: the
// attempt then fails (meta.Guard, meta.Guards and failure.log say why,
// naming the largest paths) and the working tree is to be discarded
// (ck.unsnappable). Without git checkpoints there is nothing to take.
func (ck *Tree) TakeJudged(ctx context.Context, cfg *config.Config, meta *state.Meta) (bool, error) {
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
	return false, ck.failUnsnappable(ctx, cfg, meta, err)
}

// failUnsnappable fails meta's attempt, whose work git could not take as a
// tree (cause), and marks the working tree to be discarded.
func (ck *Tree) failUnsnappable(ctx context.Context, cfg *config.Config, meta *state.Meta, cause error) error {
	ck.unsnappable = true
	what := ck.largestPaths(ctx)
	text := fmt.Sprintf("git could not take the work of this attempt as a tree within git.timeout (%s): it is too large to judge or commit. "+
		"Nothing of it was kept, and the working tree was put back at the checkpoint.\n\nWhat the working tree held, largest first:\n%s\n"+
		"Keep generated data, downloads and build outputs out of the working tree (or list them in .gitignore); "+
		"if the task needs such files, answer status \"blocked\" and say so.\n", cfg.Git.Timeout.Duration, what)
	if err := fsutil.WriteFileAtomic(filepath.Join(ck.b.p.RunDir(meta.Iteration), "failure.log"), []byte(text), 0o644); err != nil {
		return err
	}
	meta.Guard = state.GuardFail
	meta.Guards = []state.GuardMeta{{Name: snapshotGuard, ExitCode: 1, Status: state.GuardFail,
		Error: textfmt.OneLine("the work is too large for git to take as a tree within git.timeout: "+firstLine(what), 300)}}
	meta.Note = strings.TrimSpace(meta.Note + " the work was too large to take as a tree (git.timeout); discarded")
	ck.b.log.Warn("git could not take the agent's work as a tree in time; the attempt fails and the work is discarded",
		"iteration", meta.Iteration, "node", meta.Node, "err", cause)
	fmt.Fprintf(ck.b.notices, "runner: iteration %d left work git could not take as a tree within git.timeout (%s): the attempt fails and the work is discarded; largest: %s\n",
		meta.Iteration, cfg.Git.Timeout.Duration, inert.Line(firstLine(what)))
	return nil
}

// largestPaths describes the largest untracked files and the folders
// with the most of them, one per line; what git could not list is said.
func (ck *Tree) largestPaths(ctx context.Context) string {
	files, folders, err := ck.repo.LargestUntracked(ctx, 5, ck.runtime)
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

// discardUnsnappable puts the working tree back at its checkpoint
// without taking it as a tree (git.DiscardWork), after work git could
// not take in time.
func (ck *Tree) discardUnsnappable(ctx context.Context, meta *state.Meta) error {
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

// judgedSnapshot takes the working tree as a tree for the task's commit:
// the judged tree. When the working tree no longer holds it (the
// guards or the reviewer changed it, or left what git cannot take in
// time), it is put back at the judged tree first, what they left kept
// under refs/runner/kept/guards-<n> where git could take it.
func (ck *Tree) judgedSnapshot(ctx context.Context, cfg *config.Config, meta *state.Meta) (git.Snapshot, error) {
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
			meta.Note = strings.TrimSpace(meta.Note + " the guards changed the work after it was judged: what was judged lands, what they left is kept under " + git.KeptPrefix + fmt.Sprintf("guards-%d", meta.Iteration) + " (" + Short(k) + ")")
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
	ck.b.warnChangedAfterJudged(cfg, meta, changed)
	return ck.repo.Snapshot(ctx, ck.head, ck.runtime)
}

// maxChangedShown bounds the paths the warning names.
const maxChangedShown = 5

// warnChangedAfterJudged says, once per iteration, that the working tree
// changed after the work was judged, naming what changed; what lands is
// what was judged. The guards' own leftovers are no news: the test
// reports they were asked to write (junit:PATH) and Python's byte-code
// caches are logged at debug level only.
func (b *Branch) warnChangedAfterJudged(cfg *config.Config, meta *state.Meta, changed []string) {
	if _, said := b.warned.LoadOrStore(meta.Iteration, true); said {
		return
	}
	if len(changed) == 0 {
		// Not known (git could not take the tree in time): said as it is.
		b.log.Warn("the working tree changed after the work was judged; what was judged lands", "iteration", meta.Iteration, "node", meta.Node)
		return
	}
	var news []string
	for _, p := range changed {
		if !guardLeftover(cfg, meta, p) {
			news = append(news, p)
		}
	}
	if len(news) == 0 {
		b.log.Debug("the guards left their reports or caches in the working tree; what was judged lands", "iteration", meta.Iteration, "paths", strings.Join(changed, ", "))
		return
	}
	shown := news
	more := ""
	if len(shown) > maxChangedShown {
		shown, more = shown[:maxChangedShown], " and more"
	}
	b.log.Warn("the working tree changed after the work was judged (the guards or checks wrote there); what was judged lands",
		"iteration", meta.Iteration, "node", meta.Node, "changed", strings.Join(shown, ", ")+more)
}

// guardLeftover reports whether p (slash-separated, relative to the
// working tree) is what running the guards leaves by design: a test
// report a guard or check of this iteration names, or a Python byte-code
// cache.
func guardLeftover(cfg *config.Config, meta *state.Meta, p string) bool {
	for _, part := range strings.Split(p, "/") {
		if part == "__pycache__" || part == ".pytest_cache" {
			return true
		}
	}
	if strings.HasSuffix(p, ".pyc") {
		return true
	}
	var reports []string
	for _, g := range cfg.Guards {
		reports = append(reports, g.Report)
	}
	for _, c := range meta.CheckSpecs {
		reports = append(reports, c.Report)
	}
	for _, rep := range reports {
		f, err := testreport.ParseFormat(rep)
		if err != nil || f.Kind != testreport.JUnit {
			continue
		}
		if ok, _ := path.Match(f.Path, p); ok {
			return true
		}
	}
	return false
}

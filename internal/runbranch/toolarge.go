package runbranch

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/textfmt"
)

// Work git cannot take as a tree within git.timeout fails its attempt,
// naming the largest paths, and is discarded: an agent's output never
// stops the run (SPEC §20).

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

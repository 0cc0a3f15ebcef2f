package runbranch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/inert"
)

// In place (git.worktree = false), the checkout is the run branch's
// working tree and the person's too (SPEC §23): a run that begins on it
// with changes tells the runner's from the person's, and never removes
// the person's. The runner's are those it can account for: what its
// last attempt on the checkpoint holds (kept under its attempt ref), what
// the run branch's previous head holds (a move of the working tree a
// runner that died cut short), and what changed while an agent of its
// own worked there without an attempt's ref holding it (an iteration a
// killed runner left, or one abandoned: from its start to its agent's
// last output, the Spans the coordinator gives). Those are set aside as
// before (the next attempt at the same task goes on from them, another
// task starts on the checkpoint, what they held kept). Every other change
// is the person's: it stays where it is, and for the whole run no
// snapshot takes it (no task's commit, no attempt's ref) and no reset
// or landing touches it. The run names them at its start.
//
// What cannot be told apart is counted as the person's: a file the
// killed agent wrote after its last output stays in the checkout, named
// with the person's, never in a commit.

// Span is a while an agent of the runner's worked in the run branch's
// working tree with no attempt's ref holding what it did.
type Span struct{ From, To time.Time }

// attemptsLooked bounds the attempts looked through for the last one on
// the checkpoint.
const attemptsLooked = 5

// settlePersonal finds the person's changes in t, the checkout the run
// works in in place, and leaves them alone for the whole run (t.runtime),
// saying so.
func (b *Branch) settlePersonal(ctx context.Context, t *Tree) error {
	changes, err := t.repo.Changes(ctx, t.runtime)
	if err != nil || len(changes) == 0 {
		return err
	}
	snap, err := t.repo.Snapshot(ctx, t.head, t.runtime)
	if err != nil {
		return err
	}
	runners := map[string]bool{}
	for _, ref := range b.accountedFor(ctx, t) {
		differ, err := t.repo.ChangedPaths(ctx, ref, snap.Tree)
		if err != nil {
			return err
		}
		differs := make(map[string]bool, len(differ))
		for _, p := range differ {
			differs[p] = true
		}
		for _, p := range snap.Paths {
			if !differs[p] {
				runners[p] = true
			}
		}
	}
	var spans []Span
	if b.hooks.Unrecorded != nil {
		spans = b.hooks.Unrecorded()
	}
	var person []string
	for _, p := range snap.Paths {
		if !runners[p] && !changedWithin(t.repo.Top(), p, spans) {
			person = append(person, p)
		}
	}
	if len(person) == 0 {
		return nil
	}
	t.runtime = append(slices.Clip(t.runtime), person...)
	names := make([]string, 0, min(len(person), 10))
	for _, p := range person[:min(len(person), 10)] {
		names = append(names, inert.Line(p))
	}
	more := ""
	if len(person) > 10 {
		more = fmt.Sprintf(" and %d more", len(person)-10)
	}
	fmt.Fprintf(b.notices, "runner: the checkout holds changes no iteration of the runner's made, yours: %s%s; they stay where they are, and no task's commit takes them (commit them on %s, or `git stash` them, when you want them in the run)\n",
		strings.Join(names, ", "), more, t.branch)
	return nil
}

// accountedFor are the commits whose content in the working tree is the
// runner's: the run branch's previous head, and its last attempt on the
// checkpoint.
func (b *Branch) accountedFor(ctx context.Context, t *Tree) []string {
	var refs []string
	if prev, err := t.repo.ResolveCommit(ctx, t.head+"^"); err == nil {
		refs = append(refs, prev)
	}
	as, err := t.repo.Attempts(ctx)
	if err != nil {
		return refs
	}
	for i := len(as) - 1; i >= 0 && i >= len(as)-attemptsLooked; i-- {
		if parent, err := t.repo.ResolveCommit(ctx, as[i].Commit+"^"); err == nil && parent == t.head {
			return append(refs, as[i].Commit)
		}
	}
	return refs
}

// changedWithin reports whether the file at p (relative to top) was last
// changed during one of spans. A path that is gone (deleted) was not.
func changedWithin(top, p string, spans []Span) bool {
	if len(spans) == 0 {
		return false
	}
	st, err := os.Lstat(filepath.Join(top, filepath.FromSlash(p)))
	if err != nil {
		return false
	}
	m := st.ModTime()
	for _, s := range spans {
		if !m.Before(s.From) && !m.After(s.To) {
			return true
		}
	}
	return false
}

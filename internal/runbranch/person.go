package runbranch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/verify"
)

// In place (git.worktree = false), the checkout is the run branch's
// working tree and the person's too (SPEC §23): a run that begins on it
// with changes never removes a person's file. The changes the runner can
// account for are its own: what its last attempt on the checkpoint
// holds, what the run branch's previous head holds (a move of the
// working tree a runner that died cut short), what an iteration left
// unrecorded had its work judged as (its judged tree), and what changed
// while an agent of its own worked there without an attempt's ref
// holding it (an iteration a killed runner left, or one abandoned: from
// its start to its agent's recorded end, else its last output, or to
// the abandonment), by the time the file's inode last changed, which a
// program cannot set back.
// With such an iteration, a protected path is the runner's too (its
// check on restart keeps and puts it back) and so is a deleted file
// (putting it back loses nothing). Those are set aside as before.
//
// Any other change is the person's, or cannot be told from it (a file a
// killed agent wrote after its last output when its end was not
// recorded): the run refuses to start, names them, and touches nothing. Carrying them on instead would let
// them into a task's verdict (the guards run in the checkout) without
// being in its commit, or, being an agent's, past the checks made on
// restart.

// Span is a while an agent of the runner's worked in the run branch's
// working tree with no attempt's ref holding what it did.
type Span struct{ From, To time.Time }

// Unrecorded is what the runner knows of the iterations that worked in
// the run branch's working tree with no attempt's ref holding their
// work: their whiles, and the trees their work was judged as.
type Unrecorded struct {
	Spans  []Span
	Judged []string // git trees or commits
}

// attemptsLooked bounds the attempts looked through for the last one on
// the checkpoint.
const attemptsLooked = 5

// PersonsChangesError is a run refused because the checkout it works in
// in place holds changes the runner cannot account for.
type PersonsChangesError struct {
	Top, Branch string
	Paths       []string
	Killed      bool // an iteration of the runner's was left unrecorded
}

func (e *PersonsChangesError) Error() string {
	names := make([]string, 0, min(len(e.Paths), 10))
	for _, p := range e.Paths[:min(len(e.Paths), 10)] {
		names = append(names, inert.Line(p))
	}
	more := ""
	if len(e.Paths) > 10 {
		more = fmt.Sprintf(" and %d more", len(e.Paths)-10)
	}
	whose := "yours"
	if e.Killed {
		whose = "yours, or written by the agent of a runner that stopped after its last output"
	}
	return fmt.Sprintf("the checkout %s holds changes no iteration of the runner's made: %s%s (%s). Nothing was touched, and the run does not start on them: "+
		"commit them on %s to have them in the run, or set them aside (`git stash push --include-untracked -- %s`), then `runner run` again",
		e.Top, strings.Join(names, ", "), more, whose, e.Branch, strings.Join(names, " "))
}

// checkPersonal refuses a run in place whose checkout t holds changes
// the runner cannot account for as its own (a *PersonsChangesError).
func (b *Branch) checkPersonal(ctx context.Context, t *Tree, protect []string) error {
	changes, err := t.repo.Changes(ctx, t.runtime)
	if err != nil || len(changes) == 0 {
		return err
	}
	snap, err := t.repo.Snapshot(ctx, t.head, t.runtime)
	if err != nil {
		return err
	}
	var u Unrecorded
	if b.hooks.Unrecorded != nil {
		u = b.hooks.Unrecorded()
	}
	killed := len(u.Spans) > 0
	runners := map[string]bool{}
	for _, ref := range append(b.accountedFor(ctx, t), u.Judged...) {
		differ, err := t.repo.ChangedPaths(ctx, ref, snap.Tree)
		if err != nil {
			continue // a judged tree git no longer has
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
	globs, _ := verify.ParseGlobs(protect) // checked when the config loaded
	var person []string
	for _, p := range snap.Paths {
		if runners[p] {
			continue
		}
		changed, exists := changedAt(t.repo.Top(), p)
		switch {
		case killed && (!exists || len(globs) > 0 && globs.Match(p)):
		case exists && within(changed, u.Spans):
		default:
			person = append(person, p)
		}
	}
	if len(person) == 0 {
		return nil
	}
	return &PersonsChangesError{Top: t.repo.Top(), Branch: t.branch, Paths: person, Killed: killed}
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

// changedAt is when the file at p (relative to top) last changed, and
// whether it exists.
func changedAt(top, p string) (time.Time, bool) {
	st, err := os.Lstat(filepath.Join(top, filepath.FromSlash(p)))
	if errors.Is(err, os.ErrNotExist) {
		return time.Time{}, false
	} else if err != nil {
		return time.Time{}, true
	}
	return inodeChanged(st), true
}

// within reports whether at falls in one of spans.
func within(at time.Time, spans []Span) bool {
	for _, s := range spans {
		if !at.Before(s.From) && !at.After(s.To) {
			return true
		}
	}
	return false
}

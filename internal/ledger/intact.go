package ledger

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/state"
)

// The agent and the guards run in the repository with the runner's files
// within their reach, and the commands they run routinely (`git clean
// -fdx`, `git stash -u`) remove untracked and ignored files: .runner/state,
// .runner/runs, the lock file, even all of .runner. The runner checks its
// files after anything else ran (checkIntact) and puts back what is gone:
// the run state from memory, the rest from the keep, its copy in the git
// directory (state.Keep), which it brings up to date before the agent or
// the guards start (syncKeep).

// openKeep opens the keep and, when the state of this very .runner
// folder disappeared while no runner watched (an agent's git clean, then
// the runner was killed), puts it back. A keep made for another .runner
// folder (a person removed theirs and ran `runner init` again) is
// emptied: the new folder starts afresh.
func (l *Ledger) openKeep() {
	k, err := state.OpenKeep(l.p)
	if err != nil {
		l.log.Warn("no copy of the runner's state can be kept in the git directory; an agent's `git clean -fdx` would lose it", "err", err)
		return
	}
	if k == nil {
		return
	}
	id := state.DirID(l.p.Dir)
	switch owner := k.Owner(); {
	case owner == id:
		done, err := k.Restore()
		if err != nil {
			l.log.Error("could not put back the runner's files from its keep", "keep", k.Dir(), "err", err)
		} else if !done.Empty() {
			l.log.Warn("files of the runner had been removed (by an agent's `git clean`?); put back from the keep in the git directory",
				"restored", done.String(), "keep", k.Dir())
		}
	case owner != "":
		if err := os.RemoveAll(k.Dir()); err == nil {
			k, err = state.OpenKeep(l.p)
		}
		if err != nil || k == nil {
			l.log.Warn("cannot start a new keep for this .runner folder", "err", err)
			return
		}
	}
	if err := k.NoteOwner(id); err != nil {
		l.log.Warn("cannot record which .runner folder the keep belongs to", "err", err)
	}
	l.keep = k
	l.keptFloor = k.LastIteration()
}

// syncKeep brings the keep up to date (state.Keep.Sync) with the run
// folders of the iterations rs records as finished, up to the first one
// still under way: with parallel slots iterations finish out of order,
// and a folder whose agent still works is never linked (an agent refuses
// to write an output file with two links, and would be charged an
// attempt for it). A failure is logged: the keep is a second copy, the
// run goes on without it.
func (l *Ledger) syncKeep(rs *state.RunState) { l.syncKeepUpTo(keepUpTo(rs)) }

// syncKeepUpTo is syncKeep with the last run folder to link, upTo,
// found already (keepUpTo).
func (l *Ledger) syncKeepUpTo(upTo int) {
	if l.keep == nil {
		return
	}
	fsutil.FailAt(fsutil.FailKeep, "sync")
	if err := l.keep.Sync(upTo); err != nil {
		l.log.Warn("keeping a copy of the runner's state in the git directory", "err", err)
	}
}

// keepUpTo is the last run folder the keep may link: every iteration up
// to it is finished.
func keepUpTo(rs *state.RunState) int {
	up := rs.Iteration
	for _, f := range rs.Flights() {
		up = min(up, f.Iteration-1)
	}
	return up
}

// checkIntact makes sure, after the agent or the guards ran, that the
// runner's files are where they were: the locked .runner folder, the
// state files and folders, tree.json and config.toml, and the folder of
// iteration n (0: none). What is missing is put back from the keep, the
// run state from memory; the lock is taken again on a .runner folder that
// had to be made anew. It fails when .runner was replaced by another
// folder (the lock would no longer keep a second runner out) or when what
// is missing cannot be put back.
func (l *Ledger) checkIntact(n int) error {
	if err := l.lock.Check(); err != nil {
		if !errors.Is(err, state.ErrLockLost) {
			return err
		}
		if _, statErr := os.Lstat(l.p.Dir); !errors.Is(statErr, os.ErrNotExist) {
			return fmt.Errorf("%w; stop the agent from moving .runner/ (the runner cannot tell which folder is its own), then run again", err)
		}
		// All of .runner was removed: it comes back, and is locked anew.
		if err := l.restore("all of .runner/"); err != nil {
			return err
		}
		lock, err := state.AcquireLock(l.p)
		if err != nil {
			return fmt.Errorf("lock %s again after it was removed: %w", l.p.Rel(l.p.Dir), err)
		}
		l.lock.Release()
		l.lock = lock
		if l.keep != nil {
			l.keep.NoteOwner(state.DirID(l.p.Dir))
		}
	}
	var missing []string
	for _, path := range []string{l.p.StateDir(), l.p.RunState(), l.p.Journal(), l.p.RunsDir(), l.p.Tree(), l.p.Config()} {
		if path == l.p.RunState() && !l.stateOnDisk {
			continue // not written yet
		}
		if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
			missing = append(missing, l.p.Rel(path))
		}
	}
	if len(missing) > 0 {
		if err := l.restore(fmt.Sprint(missing)); err != nil {
			return err
		}
	}
	if n > 0 {
		if _, err := os.Lstat(l.p.RunDir(n)); errors.Is(err, os.ErrNotExist) {
			l.log.Warn("the folder of the iteration under way was removed while the agent or the guards ran; its logs so far are lost",
				"iteration", n, "folder", l.p.Rel(l.p.RunDir(n)))
			if err := fsutil.MkdirAll(l.p.RunDir(n), 0o755); err != nil {
				return fmt.Errorf("make %s again: %w", l.p.Rel(l.p.RunDir(n)), err)
			}
		}
		if _, err := os.Lstat(filepath.Join(l.p.RunDir(n), "prompt.md")); errors.Is(err, os.ErrNotExist) && l.promptKeeper != nil {
			// The prompt the agent was given is the record's first part.
			if err := l.promptKeeper(n); err != nil {
				return fmt.Errorf("write the prompt of iteration %d again: %w", n, err)
			}
		}
	}
	return nil
}

// KeepPrompts sets what writes the prompt of iteration n again (prompt.md
// and context.json in its run folder) when the agent or its code removed
// it: the runner keeps the prompts of the iterations under way.
func (l *Ledger) KeepPrompts(write func(n int) error) { l.promptKeeper = write }

// restore puts back what is missing under .runner/: the keep's copies,
// then run_state.json from memory, made durable.
func (l *Ledger) restore(what string) error {
	if l.keep != nil {
		done, err := l.keep.Restore()
		if err != nil {
			return fmt.Errorf("put back the runner's files (%s were removed): %w", what, err)
		}
		l.log.Warn("files of the runner were removed while the agent or the guards ran (`git clean`?); put back from the keep in the git directory",
			"missing", what, "restored", done.String(), "keep", l.keep.Dir())
	} else {
		for _, d := range []string{l.p.Dir, l.p.StateDir(), l.p.RunsDir()} {
			if err := fsutil.MkdirAll(d, 0o755); err != nil {
				return fmt.Errorf("make %s again: %w", l.p.Rel(d), err)
			}
		}
		l.log.Warn("files of the runner were removed while the agent or the guards ran; outside a git repository there is no copy of the journal and the notes to put back",
			"missing", what)
	}
	if err := ensureDurableFile(l.p.Journal()); err != nil {
		return err
	}
	if l.rs != nil {
		// The run state in memory is the newest; the journal's records
		// appended since the keep was synced are lost with the file.
		if err := l.saveState(fsutil.Durable); err != nil {
			return err
		}
	}
	return nil
}

// CheckIntact makes sure, at an iteration boundary, that the runner's
// files are where they were (a person's or a guard's `git clean` between
// iterations), putting back what is missing (checkIntact).
func (l *Ledger) CheckIntact() error { return l.checkIntact(0) }

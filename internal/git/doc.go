// Package git gives the runner its git checkpoints (SPEC.md §12): a run
// branch that the person's own branch never follows, one commit per
// finished task, failed attempts kept aside under refs/runner/attempts/,
// a working tree put back to the last checkpoint without touching the
// runner's runtime files or the ignored ones, and linked worktrees for
// agents that must not work in the person's checkout.
//
// It drives the git program, never a reimplementation of it: plumbing
// where it exists (commit-tree, update-ref with an old value as a
// compare-and-swap, read-tree and write-tree on a temporary index,
// diff-tree), machine-readable output (status --porcelain=v2 -z, trailers
// read with %(trailers:...)), and porcelain where git has no plumbing for
// the job (checkout, worktree) or where one call of it does the work of a
// status and an update-index (add -A on the temporary index, see
// Snapshot).
//
// Every call runs with a timeout in a process group of its own, in an
// environment cleaned of what would point git elsewhere (GIT_DIR,
// GIT_INDEX_FILE, GIT_WORK_TREE...), with LC_ALL=C, no pager, no prompt,
// and hooks switched off (core.hooksPath=/dev/null): the person's hooks
// are for the person's commits. A failure is an *Error naming the git
// arguments, with what git printed on stderr.
//
// A Repo is one working tree of a repository: the checkout the runner was
// started in, or a linked worktree (AddWorktree). Refs and objects are
// shared by all of them, so a commit made through one Repo is visible
// through the others. A Repo is safe for concurrent use; the working-tree
// operations (Changes, Snapshot, AdvanceHead, ResetWorktree, Follow,
// ResetFromSnapshot, SwitchBranch) of one working tree must not run concurrently with each
// other, nor with an agent working in it.
//
// A task's commit, as the loop makes it (see TestExactlyOnceAcrossACrash):
// FindByTrailers when resuming an interrupted commit phase, then
// Snapshot on the checkpoint, CommitSnapshot (ErrNoChange: nothing to
// commit), AdvanceHead from the checkpoint. A failed attempt: Snapshot,
// SaveAttempt, and ResetWorktree when the next attempt must not start
// from it.
//
// A parallel task (SPEC.md §14) works in a slot: a linked worktree with a
// detached HEAD (AddDetachedWorktree) at the run branch's checkpoint. Its
// commit is made there (Snapshot, CommitSnapshot on that checkpoint),
// then Integrate replays it onto the run branch's head, which other slots
// may have moved, without touching any working tree (a *ConflictError
// when it cannot); ResetFromSnapshot puts the result in the slot for the
// guards, and UpdateRef moves the run branch from the head it was
// replayed onto. Follow brings the run branch's working tree along, and
// MoveDetached (or StartDetachedAt, from an unknown state) puts the slot
// at the new head for its next task: the moves that know what a working
// tree holds write only the paths that differ. Integrate needs git 2.38
// (CheckIntegrate).
//
// Git 2.25 or later is needed (Open says so when it finds an older one).
package git

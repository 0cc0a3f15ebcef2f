// Package git gives the runner its git checkpoints (SPEC.md §12): a run
// branch that the person's own branch never follows, one commit per
// finished task, failed attempts kept aside under refs/runner/attempts/,
// a working tree put back to the last checkpoint without touching the
// runner's runtime files or the ignored ones, and linked worktrees for
// agents that must not work in the person's checkout.
//
// It drives the git program, never a reimplementation of it: plumbing
// where it exists (commit-tree, update-ref with an old value as a
// compare-and-swap, read-tree, write-tree and update-index on a temporary
// index), machine-readable output (status --porcelain=v2 -z, trailers read
// with %(trailers:...)), and porcelain only where git has no plumbing for
// the job (checkout, worktree). Every call runs with a timeout in a
// process group of its own, in an environment cleaned of what would point
// git elsewhere (GIT_DIR, GIT_INDEX_FILE, GIT_WORK_TREE...), with LC_ALL=C,
// no pager, no prompt, and hooks switched off (core.hooksPath=/dev/null):
// the person's hooks are for the person's commits. A failure is an *Error
// naming the git arguments, with what git printed on stderr.
//
// A Repo is one working tree of a repository: the checkout the runner was
// started in, or a linked worktree (AddWorktree). Refs and objects are
// shared by all of them, so a commit made through one Repo is visible
// through the others. A Repo is safe for concurrent use; the working-tree
// operations (Changes, Snapshot, ResetWorktree, SwitchBranch) of one
// working tree must not run concurrently with each other, nor with an
// agent working in it.
//
// Git 2.25 or later is needed (Open says so when it finds an older one).
package git

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
// environment cleaned of what would point git elsewhere (the caller's
// GIT_DIR, GIT_INDEX_FILE, GIT_WORK_TREE, configuration given through the
// environment...), with LC_ALL=C, no pager, no prompt. A failure is an
// *Error naming the git arguments, with what git printed on stderr.
//
// # What the runner's git never runs (SPEC.md §19)
//
// An agent can write its working tree, and, when the kernel does not
// confine it, the repository's .git folder: its config, hooks and
// info/attributes, and a linked worktree's .git file. None of the
// runner's git calls runs a program the agent could have named there:
//
//   - Each call names its repository and working tree (GIT_DIR,
//     GIT_COMMON_DIR, GIT_WORK_TREE: repoEnv), from what Open found once:
//     the common dir, and for a linked worktree <common>/worktrees/<id>,
//     the folder whose gitdir file names the worktree (linked.go). Git
//     never looks for a repository from a folder of the agent's, follows
//     a worktree's .git file, a commondir file or core.worktree.
//   - Hooks are off (core.hooksPath=/dev/null), and so is the fsmonitor
//     (core.fsmonitor=false: a hook path there runs at every read of the
//     index; that was the attack of SPEC §19, 16 runs of the agent's
//     script after it exited). Both as -c options, which win over every
//     configuration file.
//   - Clean, smudge and process filters and merge drivers are
//     neutralised: git has no switch for them, and .git/info/attributes,
//     which selects them with the highest precedence, cannot be skipped;
//     so every filter.<name>, merge.<name> and protocol.<name>.allow of
//     the configuration files git reads (git config --get-regexp, with
//     the same git dir) is overridden on each call (drivers.go): an empty
//     command is no filter, a merge driver exits 1 (the path conflicts).
//     Textconv and external diff drivers run only where a diff's content
//     is shown, which passes --no-textconv and --no-ext-diff.
//   - Submodules, whose configuration is in the working tree: checkouts
//     do not recurse into them (submodule.recurse=false), status does not
//     look into their files (--ignore-submodules=dirty), and a snapshot
//     takes their commits with update-index, not add (gitlinks.go).
//   - Nothing is fetched: in a partial clone, git would fetch a missing
//     object from the promisor remote, running its uploadpack, ssh command
//     or credential helper (GIT_NO_LAZY_FETCH=1, protocol.allow=never, and
//     never for each protocol.<name>.allow configured); the call fails.
//   - The calls that talk to the engine's remote (SPEC §22: Push, Fetch,
//     Reach, RemoteRef) run from a git directory of the package's own,
//     linked to the repository's refs and objects (remote.go): the
//     repository's configuration does not apply to them, so no
//     url.<base>.insteadOf or pushInsteadOf sends them elsewhere, and no
//     core.sshCommand, credential helper or core.gitProxy of it runs.
//     Only the file, git, ssh, http and https transports are allowed;
//     ext:: and fd::, which run a program of the URL's, never are.
//   - No system configuration (GIT_CONFIG_NOSYSTEM=1) nor system
//     attributes (GIT_ATTR_NOSYSTEM=1). The global configuration (the
//     person's ~/.gitconfig, XDG file, or GIT_CONFIG_GLOBAL) is read: the
//     runner's commits carry the person's identity and follow their global
//     ignore file and line-end settings, as theirs do; the drivers it
//     defines are neutralised like the repository's (a git-lfs filter runs
//     with the repository's configuration, where lfs.customtransfer names
//     programs).
//   - core.untrackedCache is left as configured: it is a cache of folder
//     times that git checks, runs nothing, and forcing it off would strip
//     it from the person's index at each status.
//
// What this costs: a repository whose attributes name a filter (Git LFS)
// gets the files' bytes committed as they are, and a worktree the runner
// makes holds the blobs as stored (LFS pointer files, not their content);
// a path with a merge driver of its own conflicts in Integrate when both
// sides changed it. What it does not cover: an agent running unconfined
// while the runner's git runs (a parallel slot's) could change the
// configuration between the runner's reading of its drivers and git's;
// the index and refs are data git trusts (a forged index entry can make a
// snapshot keep a stale blob); RunSetup's commands are the person's and
// run as they are.
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

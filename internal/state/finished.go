package state

import "time"

// How `runner finish` ended a run (Finished.How).
const (
	FinishedMerged    = "merged"       // the run branch merged into its base
	FinishedPR        = "pull_request" // pushed, a pull request opened with gh
	FinishedPushed    = "pushed"       // pushed; the pull request is the person's to open (URL)
	FinishedAbandoned = "abandoned"    // its worktrees removed without merging
)

// Finished is how `runner finish` ended the run (SPEC §23), in
// run_state.json, for `runner status`.
type Finished struct {
	How    string    `json:"how"`
	At     time.Time `json:"at"`
	Branch string    `json:"branch"` // the run branch
	Base   string    `json:"base,omitempty"`
	// Commit is the base's head after a merge, or the run branch's head
	// that was pushed or left.
	Commit string `json:"commit,omitempty"`
	// URL is the pull request's (FinishedPR), or where to open one
	// (FinishedPushed), when it is known.
	URL string `json:"url,omitempty"`
	// BranchDeleted: the run branch is gone (after a merge without
	// --keep); WorktreesRemoved: the run's worktrees are.
	BranchDeleted    bool `json:"branch_deleted,omitempty"`
	WorktreesRemoved bool `json:"worktrees_removed,omitempty"`
}

// Journal events of the run branch's way back (SPEC §23).
const (
	// EventBase: the run branch followed its base, or could not
	// (Outcome: runbranch's Followed kind; Summary says what; Paths the
	// conflicted files).
	EventBase = "base"
	// EventRefsPruned: refs under refs/runner/ past git.keep_refs were
	// deleted (Paths names them, Summary says why).
	EventRefsPruned = "refs_pruned"
	// EventFinished: `runner finish` ended the run (Outcome: Finished.How,
	// Summary says what it did).
	EventFinished = "finished"
)

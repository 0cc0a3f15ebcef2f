// Package report is the model of `runner report`: one page for the person
// who slept while the runner worked, saying what a run did — the tasks
// done with their commits, the failed attempts and why, the tasks blocked
// on a question and the commands to go on, the iterations interrupted,
// what the agents cost, the time spent waiting on usage limits, and what
// went wrong in a way a person should look at (protected files changed,
// conflicts, reviews rejected or skipped, tasks skipped by hand).
//
// It reads, and never writes: the status (package status), the journal
// and each iteration's meta.json (package state). Its JSON form is the
// `runner report --json` contract; its text form is Markdown.
package report

import (
	"encoding/json"
	"io"
	"path/filepath"
	"time"

	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/status"
)

// Report is what `runner report --json` prints. Lists are never null:
// an empty list is [].
type Report struct {
	// Repository is the repository's directory name; Root its path.
	Repository string `json:"repository"`
	Root       string `json:"root"`
	// Window is the part of the journal reported on.
	Window Window `json:"window"`
	// Progress, Branch, Checkpoint, Running and Paused are the state now,
	// as `runner status --json` gives them.
	Progress   status.Progress `json:"progress"`
	Branch     string          `json:"branch,omitempty"`
	Checkpoint string          `json:"checkpoint,omitempty"`
	Running    *status.Running `json:"running"`
	Paused     bool            `json:"paused"`
	// Tests is how far the guards' tests are on the run branch, against
	// the run's preflight, and TaskTests how far each task's checks'
	// tests are (SPEC §18), as `runner status --json` gives them; absent
	// (empty) without test reports.
	Tests     *state.TestTally `json:"tests,omitempty"`
	TaskTests []TaskTests      `json:"task_tests"`

	// Done are the iterations of the window that finished a task.
	Done []Done `json:"done"`
	// Failed are the attempts of the window that failed (a guard, the
	// agent, a retry it asked for, a rejection), with a one-line reason.
	Failed []Failure `json:"failed"`
	// Blocked are the tasks blocked now, whenever they became so.
	Blocked []Blocked `json:"blocked"`
	// Interrupted are the iterations of the window cut short: interrupted
	// (an attempt spent), set aside (none spent), or left unfinished by a
	// runner that died.
	Interrupted []Interruption `json:"interrupted"`
	// Decomposed are the tasks the agent split into subtasks.
	Decomposed []Split `json:"decomposed"`
	// Anomalies are what a person should look at.
	Anomalies []Anomaly `json:"anomalies"`
	// Usage is what the agents of the window consumed.
	Usage Usage `json:"usage"`
	// RateLimits is the waiting on usage and rate limits in the window.
	RateLimits RateLimits `json:"rate_limits"`
}

// Window is the part of the journal a report covers.
type Window struct {
	// Kind is "run" (the last `runner run` that worked on a task, to
	// now), "iteration" (from an iteration on) or "time" (from a time on).
	Kind string `json:"kind"`
	// From is the time the window starts at: the run's start, or the time
	// asked; nil for an iteration window, or a run the journal does not
	// date.
	From *time.Time `json:"from,omitempty"`
	// FromIteration is the iteration asked for (kind "iteration").
	FromIteration int `json:"from_iteration,omitempty"`
	// Runs is how many runs the window holds (kind "night").
	Runs int `json:"runs,omitempty"`
	// RunnerPID is the process of the run (kind "run").
	RunnerPID int `json:"runner_pid,omitempty"`
	// First and Last are the iterations the window holds, and Iterations
	// how many; 0 when it holds none.
	First      int `json:"first_iteration"`
	Last       int `json:"last_iteration"`
	Iterations int `json:"iterations"`
	// Until is the time of the window's last journal record.
	Until *time.Time `json:"until,omitempty"`
}

// Done is a task finished in the window.
type Done struct {
	Iteration int    `json:"iteration"`
	Node      string `json:"node"`
	Path      string `json:"path"`
	Title     string `json:"title,omitempty"`
	Summary   string `json:"summary,omitempty"` // the agent's, first line
	// Commit is the task's checkpoint on Branch (git checkpoints), with
	// its diffstat; empty without them.
	Commit   string `json:"commit,omitempty"`
	Branch   string `json:"branch,omitempty"`
	Diffstat string `json:"diffstat,omitempty"`
	Executor string `json:"executor,omitempty"`
	// Worker is the `runner worker` it ran on, with [engine] (SPEC §22).
	Worker string `json:"worker,omitempty"`
	// Review is the reviewer's verdict ("approve", "skipped"), when one
	// reviewed it.
	Review string `json:"review,omitempty"`
	// Rung is the rung of its task's ladder of executors the attempt
	// was given to (SPEC §24); absent without a ladder.
	Rung *state.RungMeta `json:"rung,omitempty"`
}

// TaskTests is how far the tests of a task's own checks are.
type TaskTests struct {
	Node  string          `json:"node"`
	Path  string          `json:"path"`
	Tests state.TestTally `json:"tests"`
}

// Failure is a failed attempt.
type Failure struct {
	Iteration   int    `json:"iteration"`
	Node        string `json:"node"`
	Path        string `json:"path"`
	Attempt     int    `json:"attempt,omitempty"`
	MaxAttempts int    `json:"max_attempts,omitempty"`
	// Outcome is meta.json's: guard_failed, retry or executor_error.
	Outcome string `json:"outcome"`
	// Reason says why, in one line.
	Reason string `json:"reason"`
	// AttemptRef keeps the attempt's changes (git checkpoints).
	AttemptRef string `json:"attempt_ref,omitempty"`
	Executor   string `json:"executor,omitempty"`
	Worker     string `json:"worker,omitempty"`
	// Rung is the rung of its task's ladder the attempt was given to;
	// CostCap the spend cap it was stopped at (outcome cost_cap).
	Rung    *state.RungMeta `json:"rung,omitempty"`
	CostCap *state.CapHit   `json:"cost_cap,omitempty"`
}

// Blocked is a task blocked now.
type Blocked struct {
	Node  string `json:"node"`
	Path  string `json:"path"`
	Title string `json:"title,omitempty"`
	// Reason is the task's blocked_reason: the agent's question, or why
	// the runner blocked it ("attempts exhausted").
	Reason string `json:"reason"`
	// Questions are those of the agent's message that blocked it, when
	// that iteration is in the window; Summary is that message's summary
	// (what the agent says of its work and why it asks).
	Questions []string `json:"questions"`
	Summary   string   `json:"summary,omitempty"`
	// Iteration is the iteration that blocked it, when in the window.
	Iteration int `json:"iteration,omitempty"`
	// Commands are the exact commands to go on: answer its question (or,
	// for used-up attempts, reopen it once the cause is fixed), or count it
	// done without running it.
	Commands []string `json:"commands"`
}

// Kinds of Interruption.
const (
	Interrupted = "interrupted" // cut short while the agent worked: an attempt spent
	SetAside    = "set_aside"   // ended before or between agent runs: no attempt spent
	Unfinished  = "unfinished"  // left in flight by a runner that is gone; the next run resolves it
)

// Interruption is an iteration cut short.
type Interruption struct {
	Iteration    int    `json:"iteration"`
	Node         string `json:"node"`
	Path         string `json:"path"`
	Kind         string `json:"kind"`
	Reason       string `json:"reason"`
	AttemptSpent bool   `json:"attempt_spent"`
	// Worker is the `runner worker` it ran on, with [engine] (SPEC §22).
	Worker string `json:"worker,omitempty"`
}

// Split is a task the agent decomposed.
type Split struct {
	Iteration int      `json:"iteration"`
	Node      string   `json:"node"`
	Path      string   `json:"path"`
	Children  []string `json:"children"`
}

// Kinds of Anomaly.
const (
	AnomalyTamper         = "tamper"          // the agent changed a protected file (reverted, kept)
	AnomalyConflict       = "conflict"        // a task's commit did not integrate onto the run branch
	AnomalyReviewRejected = "review_rejected" // the reviewer rejected work the guards passed
	AnomalyReviewSkipped  = "review_skipped"  // the reviewer failed and the task was accepted unreviewed
	AnomalyTaskSkipped    = "task_skipped"    // `runner skip` counted a task done without running it
	AnomalyVacuousCheck   = "vacuous_check"   // a task's check passed before any work: it proves nothing
	AnomalyUnconfined     = "unconfined"      // the agent ran without the kernel's confinement (said once)
	AnomalyRoomOpen       = "room_open"       // the agent's room lacked a layer the machine did not give (said once)
	AnomalyEmptyDone      = "empty_done"      // the agent said done and changed nothing
	// AnomalyRefused: a worker's result that could not be verified with
	// the engine key was refused (SPEC §22); the iteration was lost.
	AnomalyRefused = "refused_result"
	// AnomalyEngineUnprotected: iterations ran on workers while the
	// engine was not protected (said once).
	AnomalyEngineUnprotected = "engine_unprotected"
)

// Anomaly is something a person should look at.
type Anomaly struct {
	Kind      string     `json:"kind"`
	Iteration int        `json:"iteration,omitempty"`
	Node      string     `json:"node,omitempty"`
	Path      string     `json:"path,omitempty"`
	Paths     []string   `json:"paths,omitempty"` // the files it is about
	Detail    string     `json:"detail"`
	Time      *time.Time `json:"time,omitempty"`

	pos int // where in the window it happened, for the order
}

// Usage is what the agents of the window reported.
type Usage struct {
	// Total sums every iteration's agent runs (and reviews).
	Total state.Usage `json:"total"`
	// Executors splits Total by the executor that ran (meta.json's
	// executor; a review under its reviewer's name with " (review)"), when
	// any iteration names one; "" is the runs that name none.
	Executors []ExecutorUsage `json:"executors"`
	// AllRuns is the total over every run (run_state.json), which
	// loop.max_cost_usd and loop.max_tokens are checked against.
	AllRuns state.Usage `json:"all_runs"`
	// DoneByExecutor is the cost of the window's done tasks by the
	// executor that finished each (spend.go).
	DoneByExecutor []DoneCost `json:"done_by_executor"`
}

// ExecutorUsage is one executor's share.
type ExecutorUsage struct {
	Name       string      `json:"name"`
	Iterations int         `json:"iterations"`
	Usage      state.Usage `json:"usage"`
}

// RateLimits sums the waits on usage and rate limits (journal
// rate_limited records).
type RateLimits struct {
	Waits    int   `json:"waits"`
	WaitedMS int64 `json:"waited_ms"`
}

// Load builds the report of the window since selects, from the state
// now and the journal. It writes nothing and never takes the lock.
func Load(p state.Paths, since Since) (*Report, error) {
	st, err := status.Load(p)
	if err != nil {
		return nil, err
	}
	var recs []state.Record
	for _, path := range []string{p.OldJournal(), p.Journal()} {
		r, err := state.ReadJournalTail(path, 0, nil)
		if err != nil {
			return nil, err
		}
		recs = append(recs, r...)
	}
	rep := &Report{
		Repository: filepath.Base(p.Root), Root: p.Root,
		Progress: st.Progress, Branch: st.Branch, Checkpoint: st.Checkpoint, Running: st.Running, Paused: st.Paused,
		Tests: st.Tests, TaskTests: taskTests(st.Tree),
		Done: []Done{}, Failed: []Failure{}, Blocked: []Blocked{}, Interrupted: []Interruption{},
		Decomposed: []Split{}, Anomalies: []Anomaly{}, Usage: Usage{Executors: []ExecutorUsage{}, AllRuns: st.Usage, DoneByExecutor: []DoneCost{}},
	}
	g := newGatherer(p, st, rep)
	g.gather(window(recs, since, &rep.Window))
	return rep, nil
}

// taskTests lists the tasks of the status tree whose checks' tests are
// known, in tree order.
func taskTests(root *status.TreeNode) []TaskTests {
	out := []TaskTests{}
	var walk func(n *status.TreeNode, parent string)
	walk = func(n *status.TreeNode, parent string) {
		path := n.ID
		if parent != "" {
			path = parent + "/" + n.ID
		}
		if n.Tests != nil {
			out = append(out, TaskTests{Node: n.ID, Path: path, Tests: *n.Tests})
		}
		for _, c := range n.Children {
			walk(c, path)
		}
	}
	if root != nil {
		walk(root, "")
	}
	return out
}

// WriteJSON writes the report as `runner report --json` prints it:
// indented by two spaces, with a final newline.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

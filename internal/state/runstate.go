package state

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/strictjson"
)

// RunStateVersion is the run_state.json format this runner writes.
const RunStateVersion = 1

// maxStateFile bounds how much of a state file is read.
const maxStateFile = 16 << 20

// Iteration phases, each recorded durably before the next begins.
const (
	PhaseStarted    = "started"
	PhaseAgentDone  = "agent_done"
	PhaseGuardsDone = "guards_done"
	PhaseRecorded   = "recorded" // meta.json only: the outcome is applied
	PhaseAborted    = "aborted"  // meta.json only: the agent could not be started
	// PhaseWaiting (meta.json only): the runner waits out a usage or rate
	// limit; no agent is running. A runner that stops here spends no
	// attempt.
	PhaseWaiting = "waiting"
	// PhaseReviewing (the in-flight marker only): the guards passed and
	// the reviewer is at work (SPEC §17); meta.json stays in guards_done.
	// A runner that stops here asks the reviewer again.
	PhaseReviewing = "reviewing"
	// PhaseReviewed: the reviewer's verdict is in meta.json (review); the
	// outcome is recorded next, and the reviewer is never asked again.
	PhaseReviewed = "reviewed"
)

// Values of RunState.LastGuard.
const (
	GuardPass    = "pass"
	GuardFail    = "fail"
	GuardSkipped = "skipped"
)

// RunState is .runner/state/run_state.json: where the loop stands.
type RunState struct {
	Version     int       `json:"version"`
	Iteration   int       `json:"iteration"` // last finished iteration
	LastNode    string    `json:"last_node"`
	LastStatus  string    `json:"last_status"`
	LastSummary string    `json:"last_summary"`
	LastGuard   string    `json:"last_guard"`
	InFlight    *InFlight `json:"in_flight"`
	UpdatedAt   time.Time `json:"updated_at"`

	// Usage sums what every agent run reported since the state began;
	// loop.max_cost_usd and loop.max_tokens are checked against it.
	Usage Usage `json:"usage"`
	// ConsecutiveErrors counts the agent runs in a row, across nodes, that
	// failed (loop.max_consecutive_errors); a run that finishes resets it.
	ConsecutiveErrors int `json:"consecutive_errors"`

	// Branch is the run branch and Checkpoint its last commit made by a
	// task (git checkpoints, SPEC §12); empty without them.
	Branch     string `json:"branch,omitempty"`
	Checkpoint string `json:"checkpoint,omitempty"`

	// Executor is the name of the executor of the iteration under way, or
	// of the last one (SPEC §17).
	Executor string `json:"executor,omitempty"`
	// SetAside are the executors set aside for the rest of the current
	// (or last) run, and Limited those waiting out a usage or rate limit.
	SetAside []ExecutorNote `json:"executors_set_aside,omitempty"`
	Limited  []ExecutorNote `json:"executors_limited,omitempty"`
	// UsageByExecutor is Usage split by executor name (the reviewer's
	// under its own name); the caps apply to Usage, the total.
	UsageByExecutor map[string]Usage `json:"usage_by_executor,omitempty"`
	// ExecutorErrors counts, per executor name, its runs in a row that
	// failed: an executor that reaches loop.max_consecutive_errors is set
	// aside. ConsecutiveErrors counts them whatever the executor.
	ExecutorErrors map[string]int `json:"consecutive_errors_by_executor,omitempty"`

	// Owned holds the runner-owned fields of the tasks (SPEC §13) as the
	// runner last set or took them: tree.json shows them to people, and a
	// change there that no outcome, `runner reset` or `runner skip` made
	// is not taken. nil until the runner first saw a tree.
	Owned map[string]Owned `json:"owned"`

	// Preflight is the last preflight that passed (SPEC §13), with git
	// checkpoints only; nil when none is known.
	Preflight *Preflight `json:"preflight,omitempty"`
}

// ExecutorNote is an executor of the chain that cannot be used now.
type ExecutorNote struct {
	Name   string    `json:"name"`
	Reason string    `json:"reason"`
	Since  time.Time `json:"since"`
	// Until is when a limited executor may be used again; nil for one set
	// aside for the rest of the run.
	Until *time.Time `json:"until,omitempty"`
}

// Owned is a task's runner-owned fields, and when the runner set them.
type Owned struct {
	Status        string    `json:"status,omitempty"`
	Attempts      int       `json:"attempts,omitempty"`
	BlockedReason string    `json:"blocked_reason,omitempty"`
	At            time.Time `json:"at"`
}

// Preflight says that the guards, as Guards identifies them, passed on the
// checkpoint Commit before any agent worked on it. A run starting on the
// same commit with the same guards does not run them again; the runner's
// own task commits carry it along (their guards passed on them).
type Preflight struct {
	Commit string    `json:"commit"`
	Guards string    `json:"guards"` // a digest of the [[guard]] definitions
	At     time.Time `json:"at"`
}

// InFlight describes the iteration under way.
type InFlight struct {
	Iteration int       `json:"iteration"`
	Node      string    `json:"node"`
	Phase     string    `json:"phase"`
	RunnerPID int       `json:"runner_pid"`
	AgentPGID int       `json:"agent_pgid"`
	StartedAt time.Time `json:"started_at"`
}

// NextIteration is the number the next iteration gets. Numbers are never
// reused: an interrupted iteration keeps its number.
func (s *RunState) NextIteration() int {
	n := s.Iteration
	if s.InFlight != nil && s.InFlight.Iteration > n {
		n = s.InFlight.Iteration
	}
	return n + 1
}

// LoadRunState reads run_state.json. A missing file is a fresh state.
func LoadRunState(path string) (*RunState, error) {
	data, err := fsutil.ReadLimited(path, maxStateFile, true)
	if errors.Is(err, os.ErrNotExist) {
		return &RunState{Version: RunStateVersion}, nil
	}
	if err != nil {
		return nil, err
	}
	var s RunState
	if err := strictjson.Decode(data, &s, 16); err != nil {
		return nil, fmt.Errorf("parse %s: %w; fix or delete the file (deleting it forgets the last outcome)", path, err)
	}
	if s.Version != RunStateVersion {
		return nil, fmt.Errorf("parse %s: version %d is not supported (want %d)", path, s.Version, RunStateVersion)
	}
	if s.Iteration < 0 || (s.InFlight != nil && s.InFlight.Iteration < 1) {
		return nil, fmt.Errorf("parse %s: negative or zero iteration number", path)
	}
	return &s, nil
}

// SaveRunState replaces run_state.json atomically and durably.
func SaveRunState(path string, s *RunState) error {
	return SaveRunStateAs(path, s, fsutil.Durable)
}

// SaveRunStateAs replaces run_state.json atomically, as durably as d says.
func SaveRunStateAs(path string, s *RunState, d fsutil.Durability) error {
	s.Version = RunStateVersion
	s.UpdatedAt = time.Now().UTC()
	return fsutil.ReplaceJSON(path, s, d)
}

package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
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
	Version   int    `json:"version"`
	Iteration int    `json:"iteration"` // last finished iteration
	LastNode  string `json:"last_node"`
	// LastIteration is the iteration the Last* fields tell of, when it is
	// not Iteration (parallel slots record out of order); 0: Iteration.
	LastIteration int       `json:"last_iteration,omitempty"`
	LastStatus    string    `json:"last_status"`
	LastSummary   string    `json:"last_summary"`
	LastGuard     string    `json:"last_guard"`
	InFlight      *InFlight `json:"in_flight"`
	// MoreInFlight are the other iterations under way when parallel slots
	// work at once (SPEC §14): InFlight is the earliest of them all.
	// Read them all with Flights.
	MoreInFlight []*InFlight `json:"in_flight_more,omitempty"`
	UpdatedAt    time.Time   `json:"updated_at"`

	// LastOf is, with parallel slots (SPEC §14), how the last iteration of
	// each task not done ended: the Last* fields above tell of whichever
	// slot recorded last.
	LastOf map[string]Last `json:"last_of,omitempty"`

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
	// Base is the branch the run branch follows and `runner finish`
	// brings it onto (SPEC §23), as recorded when the run branch was made;
	// Finished how `runner finish` ended the run (nil until it did, and
	// again once a run starts).
	Base     string    `json:"base,omitempty"`
	Finished *Finished `json:"finished,omitempty"`

	// Executor is the name of the executor of the iteration under way, or
	// of the last one (SPEC §17).
	Executor string `json:"executor,omitempty"`
	// SetAside are the executors set aside for the rest of the current
	// (or last) run, and Limited those waiting out a usage or rate limit.
	SetAside []ExecutorNote `json:"executors_set_aside,omitempty"`
	Limited  []ExecutorNote `json:"executors_limited,omitempty"`
	// UsageByExecutor is Usage split by executor name (the reviewer's
	// under ReviewLabel of its name); the caps apply to Usage, the total.
	UsageByExecutor map[string]Usage `json:"usage_by_executor,omitempty"`
	// UsageByTask is Usage split by task (its agents' and its reviewer's,
	// over all its attempts since it was last reset): what
	// loop.task_max_cost_usd, loop.task_max_tokens and a node's own caps
	// are checked against (SPEC §24).
	UsageByTask map[string]Usage `json:"usage_by_task,omitempty"`
	// Deaths are the last two runner deaths that interrupted agents at
	// work, with the tasks interrupted: a task interrupted by a death
	// spends an attempt only when it was also at work at the one before
	// (Death).
	Deaths []RunnerDeath `json:"runner_deaths,omitempty"`
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

// Last is how a task's last iteration ended, as the Last* fields of
// RunState say it of the run's.
type Last struct {
	Iteration int    `json:"iteration"`
	Status    string `json:"status"`
	Summary   string `json:"summary"`
	Guard     string `json:"guard"`
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
	// Passing counts the tests of the guards' reports that passed when
	// this preflight ran; it stays as the baseline follows the run
	// branch, so that progress reads against it.
	Passing *int `json:"passing,omitempty"`
}

// InFlight describes the iteration under way.
type InFlight struct {
	Iteration int    `json:"iteration"`
	Node      string `json:"node"`
	Phase     string `json:"phase"`
	RunnerPID int    `json:"runner_pid"`
	// RunnerLife is the Life of the runner that started it.
	RunnerLife string    `json:"runner_life,omitempty"`
	AgentPGID  int       `json:"agent_pgid"`
	StartedAt  time.Time `json:"started_at"`
	// Slot is the parallel slot the iteration works in (1 to
	// loop.parallel), 0 without slots.
	Slot int `json:"slot,omitempty"`
	// Executor is the executor of the chain its agent runs on.
	Executor string `json:"executor,omitempty"`
	// JudgesRunnerFiles says the iteration's agent can reach .runner/
	// (it is not confined to a worktree beside the checkout), so what
	// changes there while it is under way counts as its tamper: a
	// person's command that would write there waits for it.
	JudgesRunnerFiles bool `json:"judges_runner_files,omitempty"`
	// Worker is the `runner worker` running the iteration, with [engine]
	// (SPEC §22), once it is known.
	Worker string `json:"worker,omitempty"`
}

// NextIteration is the number the next iteration gets. Numbers are never
// reused: an interrupted iteration keeps its number.
func (s *RunState) NextIteration() int {
	return s.LastKnown() + 1
}

// LastKnown is the highest iteration number the run state knows of: the
// last finished one, or one under way.
func (s *RunState) LastKnown() int {
	n := s.Iteration
	for _, f := range s.Flights() {
		n = max(n, f.Iteration)
	}
	return n
}

// Flights lists the iterations under way, earliest first.
func (s *RunState) Flights() []*InFlight {
	if s.InFlight == nil {
		return nil
	}
	return append([]*InFlight{s.InFlight}, s.MoreInFlight...)
}

// Flight returns the iteration n under way, nil when it is not.
func (s *RunState) Flight(n int) *InFlight {
	for _, f := range s.Flights() {
		if f.Iteration == n {
			return f
		}
	}
	return nil
}

// AddFlight marks f under way, replacing a marker of the same iteration.
func (s *RunState) AddFlight(f *InFlight) {
	all := s.Flights()
	for i, g := range all {
		if g.Iteration == f.Iteration {
			all[i] = f
			s.setFlights(all)
			return
		}
	}
	s.setFlights(append(all, f))
}

// EndFlight clears the marker of iteration n, if any.
func (s *RunState) EndFlight(n int) {
	all := s.Flights()
	s.setFlights(slices.DeleteFunc(all, func(f *InFlight) bool { return f.Iteration == n }))
}

// setFlights stores the markers, the earliest in InFlight.
func (s *RunState) setFlights(all []*InFlight) {
	slices.SortFunc(all, func(a, b *InFlight) int { return a.Iteration - b.Iteration })
	s.InFlight, s.MoreInFlight = nil, nil
	if len(all) > 0 {
		s.InFlight = all[0]
	}
	if len(all) > 1 {
		s.MoreInFlight = slices.Clone(all[1:])
	}
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
	if s.Iteration < 0 || (s.InFlight == nil && len(s.MoreInFlight) > 0) {
		return nil, fmt.Errorf("parse %s: negative iteration number, or in_flight_more without in_flight", path)
	}
	for _, f := range s.Flights() {
		if f == nil || f.Iteration < 1 || f.Slot < 0 {
			return nil, fmt.Errorf("parse %s: an iteration in flight with a zero or negative number or slot", path)
		}
	}
	return &s, nil
}

// SaveRunState replaces run_state.json atomically and durably.
func SaveRunState(path string, s *RunState) error {
	return SaveRunStateAs(path, s, fsutil.Durable)
}

// SaveRunStateAs replaces run_state.json atomically, as durably as d says.
func SaveRunStateAs(path string, s *RunState, d fsutil.Durability) error {
	data, err := EncodeRunState(s)
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return WriteRunState(path, data, d)
}

// EncodeRunState stamps s with the version and the time, and returns
// what SaveRunStateAs writes for it: indented JSON and a final newline,
// as fsutil.ReplaceJSON writes. Encoding it once serves both the write
// and the check of what the file holds afterwards.
func EncodeRunState(s *RunState) ([]byte, error) {
	s.Version = RunStateVersion
	s.UpdatedAt = time.Now().UTC()
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// WriteRunState replaces run_state.json with data from EncodeRunState,
// atomically, as durably as d says.
func WriteRunState(path string, data []byte, d fsutil.Durability) error {
	return fsutil.ReplaceFile(path, data, 0o644, d)
}

// SameRunState reports whether a and b, the contents of two
// run_state.json files, say the same: equal bytes, or the same fields
// once read (another layout, fields this version does not know).
func SameRunState(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y RunState
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ax, errx := json.Marshal(&x)
	ay, erry := json.Marshal(&y)
	return errx == nil && erry == nil && bytes.Equal(ax, ay)
}

// RunnerDeath is a runner that died while agents worked: its process id
// and the tasks whose iterations it left interrupted.
type RunnerDeath struct {
	RunnerPID int `json:"runner_pid"`
	// Life is the runner's Life ("" in a run state written before lives
	// were noted).
	Life  string   `json:"life,omitempty"`
	Nodes []string `json:"nodes"`
}

// Death notes that the runner pid, in its life, died while node's agent
// worked (a runner is told by both: a pid comes back), and
// reports whether that interruption spends an attempt: only when node
// was also at work at the runner's previous death, so that a task that
// keeps killing the runner still ends blocked while the tasks at work
// beside it lose nothing. Noting the same interruption again (a runner
// that died while recording it) gives the same answer.
func (s *RunState) Death(pid int, life, node string) (charged bool) {
	var prev *RunnerDeath
	n := len(s.Deaths)
	if n == 0 || s.Deaths[n-1].RunnerPID != pid || s.Deaths[n-1].Life != life {
		s.Deaths = append(s.Deaths, RunnerDeath{RunnerPID: pid, Life: life})
		if len(s.Deaths) > 2 {
			s.Deaths = s.Deaths[len(s.Deaths)-2:]
		}
		n = len(s.Deaths)
	}
	if n > 1 {
		prev = &s.Deaths[n-2]
	}
	cur := &s.Deaths[n-1]
	if !slices.Contains(cur.Nodes, node) {
		cur.Nodes = append(cur.Nodes, node)
	}
	return prev != nil && slices.Contains(prev.Nodes, node)
}

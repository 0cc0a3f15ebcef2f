// Package status is the model of `runner status`: where a repository's
// run stands (progress, the iteration under way, the last one recorded,
// the next task, the tree with its status marks, the usage), built from
// .runner/ without writing anything or taking the lock. Its JSON form is
// the `runner status --json` contract, and the dashboard's /api/status.
package status

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/live"
	"github.com/runner-cli/runner/internal/outcome"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// Report is what `runner status --json` prints.
type Report struct {
	Root     string   `json:"root"`
	Progress Progress `json:"progress"`
	// Tests is how far the guards' tests are on the run branch's last
	// checkpoint, against the run's preflight ("tests: 9 of 12 passing
	// (baseline 4)"); absent without a guard with a test report.
	Tests   *state.TestTally `json:"tests,omitempty"`
	Running *Running         `json:"running"`
	Last    *Last            `json:"last"`
	Next    string           `json:"next,omitempty"`
	Tree    *TreeNode        `json:"tree"`
	// Usage sums what the agents reported over every run (run_state.json).
	Usage state.Usage `json:"usage"`
	// Caps are the spend caps of the run and of each task (SPEC §24),
	// with what was spent against them; absent without caps.
	Caps []CapUse `json:"caps,omitempty"`
	// Branch is the run branch and Checkpoint its head: its last task
	// commit, as git says (run_state.json's when git cannot say); absent
	// without git checkpoints.
	Branch     string `json:"branch,omitempty"`
	Checkpoint string `json:"checkpoint,omitempty"`
	// Base is the branch the run branch follows and `runner finish`
	// brings it onto, BaseAhead how many commits it has that the run
	// branch has not (SPEC §23); Finished how `runner finish` ended the
	// run, absent until it did.
	Base      string          `json:"base,omitempty"`
	BaseAhead int             `json:"base_ahead,omitempty"`
	Finished  *state.Finished `json:"finished,omitempty"`
	// Executor is the executor of the iteration under way, or of the last
	// one (SPEC §17); SetAside are the executors set aside for the rest of
	// the run and Limited those waiting out a usage or rate limit, each
	// with why.
	Executor string `json:"executor,omitempty"`
	Reviewer string `json:"reviewer,omitempty"` // the [review] executor's name, when there is one
	// Engine says where the iterations run with [engine] (SPEC §22):
	// "temporal ADDRESS, task queue Q"; "" on this machine.
	Engine string `json:"engine,omitempty"`
	// EngineUnprotected says why the engine is not protected (SPEC §22):
	// an agent could submit iterations to the workers or answer for one.
	EngineUnprotected string               `json:"engine_unprotected,omitempty"`
	SetAside          []state.ExecutorNote `json:"executors_set_aside,omitempty"`
	Limited           []state.ExecutorNote `json:"executors_limited,omitempty"`
	// UsageByExecutor splits Usage by executor name (the reviewer's under
	// state.ReviewLabel of its own); the caps apply to the total.
	UsageByExecutor map[string]state.Usage `json:"usage_by_executor,omitempty"`
	// Paused is set while `runner pause` is in effect: a runner finishes
	// the iteration under way (Running), then starts none until `runner
	// resume`; a runner started meanwhile holds before its first.
	Paused bool `json:"paused"`
	// Slots are the iterations under way in parallel slots (SPEC §14),
	// earliest first; Running is the first of them.
	Slots []Running `json:"slots,omitempty"`
	// NeedsYou are the tasks blocked now, each with its question and
	// the command to go on.
	NeedsYou []NeedsYou `json:"needs_you,omitempty"`
}

// Progress counts tasks (leaves).
type Progress struct {
	Done    int `json:"done"`
	Total   int `json:"total"`
	Blocked int `json:"blocked"`
}

// Running is the iteration under way, if any.
type Running struct {
	Iteration int       `json:"iteration"`
	Node      string    `json:"node"`
	Phase     string    `json:"phase"`
	StartedAt time.Time `json:"started_at"`
	Holder    string    `json:"holder,omitempty"`
	Alive     bool      `json:"alive"`          // a runner holds the lock
	Slot      int       `json:"slot,omitempty"` // its parallel slot (SPEC §14)
	// Event is the agent's latest event, from the events its CLI streams
	// (live.LatestEvent): "running go test ./..."; "" when none is known.
	Event string `json:"event,omitempty"`
	// Worker is the `runner worker` it runs on, with [engine] (SPEC §22).
	Worker string `json:"worker,omitempty"`
}

// Last is the last recorded iteration.
type Last struct {
	Iteration   int    `json:"iteration"`
	Node        string `json:"node"`
	AgentStatus string `json:"agent_status"`
	Guard       string `json:"guard"`
	Outcome     string `json:"outcome,omitempty"`
	Summary     string `json:"summary"`
	// Unconfined says why its agent was not confined (SPEC §19);
	// Openings what its room left open.
	Unconfined string   `json:"unconfined,omitempty"`
	Openings   []string `json:"openings,omitempty"`
	// Refused says why what came back from its worker was refused: it
	// could not be verified with the engine key (SPEC §22).
	Refused string `json:"refused,omitempty"`
	// Landing says why its task did not land although its guards
	// passed: "conflict", or "guards" (they failed on the run branch).
	Landing string `json:"landing,omitempty"`
	// NoChange says its agent said done and changed nothing;
	// CommandsFailed that every command it ran failed.
	NoChange       bool `json:"no_change,omitempty"`
	CommandsFailed bool `json:"commands_failed,omitempty"`
	// Executor ran it; Rung is the rung of its task's ladder of executors
	// the attempt was given to (SPEC §24), absent without a ladder.
	Executor string          `json:"executor,omitempty"`
	Rung     *state.RungMeta `json:"rung,omitempty"`
	// CostCap is the spend cap its agent or reviewer was stopped at.
	CostCap *state.CapHit `json:"cost_cap,omitempty"`
}

// TreeNode is one node of the status tree.
type TreeNode struct {
	ID            string `json:"id"`
	Title         string `json:"title"`
	Status        string `json:"status"`
	Attempts      int    `json:"attempts,omitempty"`
	MaxAttempts   int    `json:"max_attempts"`
	BlockedReason string `json:"blocked_reason,omitempty"`
	// Checks names the node's own checks (SPEC §18); Tests is how far
	// their reports' tests are, at the last iteration that ran them
	// (absent without a report).
	Checks []string         `json:"checks,omitempty"`
	Tests  *state.TestTally `json:"tests,omitempty"`
	// Spent is what the task's agents and reviewers used over its
	// attempts, what its spend caps count (SPEC §24).
	Spent    *state.Usage `json:"spent,omitempty"`
	Children []*TreeNode  `json:"children,omitempty"`
}

// Inputs are the files a report is built from: what a program that shows
// the status live watches. A runner that exits releases its lock without
// touching any of them; a watcher re-checks on a timer for that.
func Inputs(p state.Paths) []string {
	return []string{p.Config(), p.Tree(), p.RunState(), p.Journal(), p.Lock(), p.PauseRequest()}
}

// Tasks are a repository's config and tree, loaded, with the tree's
// index and the selection the runner would make now (tree.Select): what
// a report says of the tasks, and what `runner next` and `runner prompt`
// show, read the one way so that they agree.
type Tasks struct {
	Config    *config.Config
	Tree      *tree.Tree
	Index     *tree.Index
	Selection tree.Selection
	// recentEnds are the journal's last records of iterations' ends
	// (state.RecentEnds), read once for the owned fields and the last
	// iteration.
	recentEnds []state.Record
}

// LoadTasks reads the config and the tree, and selects the next task.
// The tasks' status, attempts and blocked reason are the ledger's
// (run_state.json), whatever tree.json shows (outcome.ApplyOwned): a
// `git stash` that dropped them from tree.json does not make done tasks
// look new. It writes nothing and never takes the lock.
func LoadTasks(p state.Paths) (*Tasks, error) {
	cfg, err := config.Load(p.Config())
	if err != nil {
		return nil, err
	}
	t, err := tree.Load(p.Tree())
	if err != nil {
		return nil, err
	}
	var inFlight []string
	var recent []state.Record
	if rs, err := state.LoadRunState(p.RunState()); err == nil && rs != nil {
		recent = state.RecentEnds(p)
		outcome.ApplyOwned(t, latestOwned(t, rs.Owned, recent), func() []state.Record {
			recs, _ := state.ReadJournal(p.Journal())
			return outcome.OwnedCommands(recs)
		})
		if held, _, _ := state.LockHolder(p); held {
			// A runner is at work: the next task is one it has not
			// started (parallel slots run several at once).
			for _, in := range state.CurrentInFlights(p, rs) {
				inFlight = append(inFlight, in.Node)
			}
		}
	}
	ix := tree.NewIndex(t)
	sel := tree.Select(t, ix, cfg.Loop.MaxAttempts)
	if len(inFlight) > 0 {
		_, sel = tree.SelectN(t, ix, cfg.Loop.MaxAttempts, 1, inFlight)
	}
	return &Tasks{Config: cfg, Tree: t, Index: ix, Selection: sel, recentEnds: recent}, nil
}

// Load reads the config, the tree and the run state, and builds the
// report. It writes nothing and never takes the lock.
func Load(p state.Paths) (*Report, error) {
	tasks, err := LoadTasks(p)
	if err != nil {
		return nil, err
	}
	rs, err := state.LoadRunState(p.RunState())
	if err != nil {
		return nil, err
	}
	return Build(p, tasks, rs), nil
}

// Build makes the report from loaded inputs. It reads the journal's end
// and the lock to tell the iteration under way (state.CurrentInFlight,
// state.LockHolder), the last iteration's meta.json for its outcome, and
// the run branch's head from git (one call, with git checkpoints on).
func Build(p state.Paths, tasks *Tasks, rs *state.RunState) *Report {
	cfg, sel := tasks.Config, tasks.Selection
	rep := &Report{Root: p.Root}
	rep.Progress = Progress{Done: sel.DoneLeaves, Total: sel.TotalLeaves}
	for _, b := range sel.Blocked {
		if b.IsLeaf() {
			rep.Progress.Blocked++
		}
	}
	if sel.State == tree.Selectable {
		rep.Next = sel.Node.ID
	}
	if all := state.CurrentInFlights(p, rs); len(all) > 0 {
		held, holder, _ := state.LockHolder(p)
		for _, in := range all {
			run := Running{Iteration: in.Iteration, Node: in.Node, Phase: in.Phase,
				StartedAt: in.StartedAt, Holder: holder, Alive: held, Slot: in.Slot, Worker: in.Worker}
			if held {
				run.Event = live.LatestEvent(filepath.Join(p.RunDir(in.Iteration), "events.jsonl"))
			}
			if rep.Running == nil {
				rep.Running = &run
			}
			if in.Slot > 0 {
				rep.Slots = append(rep.Slots, run)
			}
		}
	}
	rep.Branch, rep.Checkpoint = rs.Branch, rs.Checkpoint
	if rep.Branch != "" && cfg.Git.Checkpoint {
		// run_state.json is written lazily while slots work: the run
		// branch's head is what git says, when git can say it.
		if head := branchHead(p, rep.Branch, cfg.Git.Timeout.Duration); head != "" {
			rep.Checkpoint = head
		}
	}
	rep.Base, rep.Finished = cfg.Git.Base, rs.Finished
	if rep.Base == "" {
		rep.Base = rs.Base
	}
	if rep.Base != "" && rep.Finished == nil && rep.Checkpoint != "" {
		rep.BaseAhead = baseAhead(p, rep.Branch, rep.Base, cfg.Git.Timeout.Duration)
	}
	if _, err := os.Lstat(p.PauseRequest()); err == nil {
		rep.Paused = true
	}
	if rec := lastEnd(tasks.recentEnds); rec != nil && rec.Iteration > max(rs.Iteration, rs.LastIteration) {
		// Recorded since run_state.json was last written (it is written
		// lazily while slots work): the journal says it.
		rep.Last = &Last{Iteration: rec.Iteration, Node: rec.Node, AgentStatus: rec.AgentStatus, Guard: rec.Guard, Summary: rec.Summary}
		if m, err := state.LoadMeta(p.RunDir(rec.Iteration)); err == nil {
			rep.Last.fromMeta(m)
		}
	} else if rs.Iteration > 0 || rs.LastIteration > 0 {
		last := rs.Iteration
		if rs.LastIteration > 0 {
			last = rs.LastIteration
		}
		rep.Last = &Last{Iteration: last, Node: rs.LastNode, AgentStatus: rs.LastStatus, Guard: rs.LastGuard, Summary: rs.LastSummary}
		if m, err := state.LoadMeta(p.RunDir(last)); err == nil {
			rep.Last.fromMeta(m)
		}
	}
	rep.Tree = convert(tasks.Tree.Root, cfg.Loop.MaxAttempts)
	rep.NeedsYou = needsYou(rep.Tree)
	rep.Tests = runTests(p, rs)
	addTaskTests(rep.Tree, taskTests(tasks.recentEnds))
	rep.Usage = rs.Usage
	rep.Caps = capsOf(cfg.Loop, tasks.Tree, rs)
	addSpent(rep.Tree, rs.UsageByTask)
	rep.UsageByExecutor = rs.UsageByExecutor
	rep.Executor, rep.SetAside = rs.Executor, rs.SetAside
	if cfg.Review.Enabled {
		rep.Reviewer = cfg.Review.Label()
	}
	if e := cfg.Engine; e.On() {
		rep.Engine = fmt.Sprintf("%s %s, task queue %s", e.Kind, e.Address, e.TaskQueue)
		if es, err := state.LoadEngine(p); err == nil {
			rep.EngineUnprotected = es.Unprotected
		}
	}
	now := time.Now()
	for _, l := range rs.Limited {
		if l.Until != nil && l.Until.After(now) {
			rep.Limited = append(rep.Limited, l)
		}
	}
	return rep
}

// fromMeta fills l from the iteration's meta.json.
func (l *Last) fromMeta(m *state.Meta) {
	l.Outcome, l.Unconfined, l.NoChange, l.CommandsFailed = m.Outcome, m.Unconfined, m.NoChange, m.CommandsFailed
	l.Refused, l.Openings = m.Refused, m.Openings
	if m.Conflict != nil {
		l.Landing = m.Conflict.Kind
	}
	l.Executor, l.Rung, l.CostCap = m.Executor, m.Rung, m.CostCap
}

// branchHeadTimeout bounds the git call that reads the run branch's head.
const branchHeadTimeout = 5 * time.Second

// branchHead is the commit the run branch points to, as git says in one
// call; "" when git cannot say (not installed, no such branch, not a
// repository), for the run state's word to stand.
func branchHead(p state.Paths, branch string, timeout time.Duration) string {
	if timeout <= 0 || timeout > branchHeadTimeout {
		timeout = branchHeadTimeout
	}
	head, err := git.BranchHead(context.Background(), p.Root, branch, git.Options{Timeout: timeout})
	if err != nil {
		return ""
	}
	return head
}

// latestOwned is what the ledger knows of the tasks' runner-owned fields:
// run_state.json's, and, newer, the outcomes the journal recorded since
// (run_state.json is written lazily, after tree.json and the journal,
// while slots work). A recorded blocked reason is taken from t when t
// agrees with the record (the journal does not carry it).
func latestOwned(t *tree.Tree, owned map[string]state.Owned, recs []state.Record) map[string]state.Owned {
	if owned == nil {
		return nil
	}
	ix := tree.NewIndex(t)
	out := make(map[string]state.Owned, len(owned))
	for id, o := range owned {
		out[id] = o
	}
	for _, r := range recs {
		if r.Event != state.EventRecorded && r.Event != state.EventInterrupted || r.Node == "" {
			continue
		}
		o, known := out[r.Node]
		if known && !r.Time.After(o.At) {
			continue
		}
		next := state.Owned{Status: r.NodeStatus, Attempts: r.Attempts, At: r.Time}
		if r.NodeStatus == string(tree.StatusOpen) {
			next.Status = ""
		}
		if n := ix.Node(r.Node); n != nil && string(n.Status) == next.Status && n.Attempts == next.Attempts {
			next.BlockedReason = n.BlockedReason
		} else if known && o.Status == next.Status {
			next.BlockedReason = o.BlockedReason
		}
		out[r.Node] = next
	}
	return out
}

// lastEnd is the last of the records of iterations' ends, nil for none.
func lastEnd(ends []state.Record) *state.Record {
	for i := len(ends) - 1; i >= 0; i-- {
		if ends[i].Iteration > 0 {
			return &ends[i]
		}
	}
	return nil
}

// convert makes the status tree of n, whose tasks without a max_attempts
// of their own get defaultMax.
func convert(n *tree.Node, defaultMax int) *TreeNode {
	s := &TreeNode{ID: n.ID, Title: n.Title, Status: string(n.EffectiveStatus()), Attempts: n.Attempts,
		MaxAttempts: n.AttemptLimit(defaultMax), BlockedReason: n.BlockedReason}
	for _, c := range n.Checks {
		s.Checks = append(s.Checks, c.Name)
	}
	if len(n.Children) > 0 {
		s.Children = make([]*TreeNode, len(n.Children))
		for i, c := range n.Children {
			s.Children[i] = convert(c, defaultMax)
		}
	}
	return s
}

// WriteJSON writes the report as `runner status --json` prints it:
// indented by two spaces, with a final newline.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

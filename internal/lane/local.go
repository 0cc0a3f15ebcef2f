package lane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/iteration"
	"github.com/runner-cli/runner/internal/runbranch"
	"github.com/runner-cli/runner/internal/sandbox"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// Local is a lane on this machine: the run branch's working tree, or a
// slot's worktree. Its agent, guards and reviewer run here, confined to
// it where the run confines.
type Local struct {
	env  *Env
	dir  string
	tree *runbranch.Tree
	slot int
	out  io.Writer
}

// Local is the lane of the working tree dir, with its checkpoints t (nil
// without git), slot (0: the run branch's own) and progress output out.
func (e *Env) Local(dir string, t *runbranch.Tree, slot int, out io.Writer) *Local {
	return &Local{env: e, dir: dir, tree: t, slot: slot, out: out}
}

// Here is l itself.
func (l *Local) Here() *Local { return l }

// Dir is the working tree.
func (l *Local) Dir() string { return l.dir }

// Tree is the working tree's checkpoints; nil without git.
func (l *Local) Tree() *runbranch.Tree { return l.tree }

// Slot is the lane's slot, 0 for the run branch's own working tree.
func (l *Local) Slot() int { return l.slot }

// Out is the lane's progress output.
func (l *Local) Out() io.Writer { return l.out }

// Lock is the run's lock.
func (l *Local) Lock() *Lock { return l.env.Lock }

// Confined says whether the lane's agent, guards and reviewer run
// confined: the run can confine, and the lane is a worktree of its own.
func (l *Local) Confined() bool { return l.env.Rooms.Confined(l.dir) }

// Openings are what the lane's room leaves open (none when it is not
// confined: Unconfined says so).
func (l *Local) Openings() []string { return l.env.Rooms.Openings(l.dir) }

// Unconfined says why the lane's programs are not confined, "" when
// they are.
func (l *Local) Unconfined() string { return l.env.Rooms.Unconfined(l.dir) }

// Room is what iteration n's agent, guards and reviewer may write in the
// lane, and their temporary directory (room.Policy.Room).
func (l *Local) Room(n int) (*sandbox.Room, string, error) {
	return l.env.Rooms.Room(l.env.Config(), n, l.dir)
}

// Start probes the task's checks and marks when the work on it started.
func (l *Local) Start(ctx context.Context, node *tree.Node, meta *state.Meta) {
	l.Probe(ctx, node, meta)
	l.startWork(meta)
}

// Run runs the iteration's agent in the working tree, its judges taken
// before and checked when it exits (iteration.RunProgram), and the run
// branch checked too.
func (l *Local) Run(ctx context.Context, s Spec) (Result, error) {
	n := s.Meta.Iteration
	spec := l.Program(s.Executor, s.Request, filepath.Join(l.env.Paths.RunDir(n), "tamper"), "tamper/")
	l.env.Care.KeepBeforeAgent()
	run, err := iteration.RunProgram(ctx, spec)
	var before *iteration.BeforeStartError
	if errors.As(err, &before) {
		return Result{NotRun: before.Err}, nil
	} else if err != nil {
		return Result{}, err
	}
	res := Result{Agent: run.Result, StartErr: run.StartErr}
	if res.Tamper, err = l.env.Branch.WithMoved(ctx, n, run.Tamper); err != nil {
		return Result{}, err
	}
	if a := run.Result; run.StartErr == nil && a.Class == executor.ClassUnavailable {
		res.Unavailable = executor.Unavailable(s.Name, s.Preset, a)
	}
	return res, nil
}

// Judge runs the configured guards and the task's checks in the working
// tree, with the iteration in their environment as the agent has it, so
// that what they leave behind is found and stopped like the agent's,
// judged against the baseline of the checkpoint the work started from.
func (l *Local) Judge(ctx context.Context, meta *state.Meta, judged Judged) ([]state.GuardMeta, string, error) {
	key := l.tree.BaselineKey()
	l.env.Care.GuardsStarting()
	j, err := l.Guards(ctx, meta, l.env.Paths.RunDir(meta.Iteration), key, judged)
	if ierr := l.env.Care.GuardsEnded(meta.Iteration); ierr != nil {
		return nil, "", ierr
	}
	if err != nil {
		return nil, "", err
	}
	meta.Checks = j.Checks
	if j.Judged {
		meta.Baseline = key
	}
	return j.Results, j.Verdict, nil
}

// Adopt finds nothing: an agent on this machine does not outlive its
// runner (its supervisor stops it), and the coordinator recovers what it
// left from the run folder.
func (l *Local) Adopt(context.Context, *state.InFlight, *state.Meta) (Result, bool, error) {
	return Result{}, false, nil
}

// Watched says whether the lane is a slot whose programs run unconfined.
func (l *Local) Watched() bool { return l.slot > 0 && !l.Confined() }

// Probe runs a task's own checks once on its untouched checkpoint,
// before its first attempt (SPEC §18): a check that passes there cannot
// tell whether the task is done. It notes those in meta.Vacuous and says
// so; they still judge the task.
func (l *Local) Probe(ctx context.Context, node *tree.Node, meta *state.Meta) {
	if node.Attempts > 0 || len(node.Checks) == 0 {
		return
	}
	checks := make([]iteration.Check, len(node.Checks))
	for i, c := range node.Checks {
		spec := state.CheckSpec{Name: c.Name, Run: c.Run, Timeout: c.Timeout, OutputLimit: c.OutputLimit, Report: c.Report}
		checks[i] = iteration.Check{Node: node.ID, Guard: iteration.CheckOf(spec).Guard}
	}
	dir := filepath.Join(l.env.Paths.RunDir(meta.Iteration), "checks-before")
	if err := fsutil.MkdirAll(dir, 0o755); err != nil {
		return
	}
	room, _, err := l.Room(meta.Iteration)
	if err != nil {
		return
	}
	grace := l.env.Config().Executor.KillGrace.Duration
	passing, tally, err := iteration.Probe(ctx, l.dir, checks, grace, l.guardEnv(meta), room, dir, iteration.Hooks{Outside: l.env.Lock.Outside})
	if err != nil {
		return
	}
	meta.ChecksBefore = tally
	if len(passing) == 0 {
		return
	}
	meta.Vacuous = passing
	fmt.Fprintf(l.out, "#%d %-24s check %s passes before any work: it proves nothing about this task\n",
		meta.Iteration, inert.Line(meta.NodePath), inert.Line(strings.Join(passing, ", ")))
}

// guardEnv is the guards' environment: the iteration, as the agent has
// it, so that what they leave behind is found like the agent's, and the
// iteration's temporary directory where the lane is confined.
func (l *Local) guardEnv(meta *state.Meta) []string {
	env := []string{"RUNNER_DIR=" + l.env.Paths.Dir, "RUNNER_ITERATION=" + strconv.Itoa(meta.Iteration), "RUNNER_NODE_ID=" + meta.Node}
	if l.Confined() {
		env = append(env, TempEnv(l.env.Rooms.TempDir(meta.Iteration))...)
	}
	return env
}

// TempEnv points TMPDIR at dir ("" for none).
func TempEnv(dir string) []string {
	if dir == "" {
		return nil
	}
	return []string{"TMPDIR=" + dir}
}

// CheckSpecs are checks as meta.json keeps them.
func CheckSpecs(checks []tree.NodeCheck) []state.CheckSpec {
	out := []state.CheckSpec{}
	for _, c := range checks {
		out = append(out, state.CheckSpec{Node: c.Node, Name: c.Name, Run: c.Run, Timeout: c.Timeout, OutputLimit: c.OutputLimit, Report: c.Report})
	}
	return out
}

package lane

import (
	"context"
	"errors"
	"io"
	"path/filepath"

	executor "github.com/runner-cli/runner/internal/exec"
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

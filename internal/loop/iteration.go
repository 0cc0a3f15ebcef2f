package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/lane"
	"github.com/runner-cli/runner/internal/proc"
	"github.com/runner-cli/runner/internal/prompt"
	"github.com/runner-cli/runner/internal/review"
	"github.com/runner-cli/runner/internal/spend"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// underway is one iteration under way: its number, its node, what its
// agent is given, and its record (meta.json), carried from step to step.
// The steps read top to bottom in iterate.
type underway struct {
	n    int
	node *tree.Node
	meta *state.Meta
	prep *Prepared
	req  executor.Request
	link *link     // the executor it runs on (fallback.go)
	lane lane.Lane // where it works
	// caps are the spend caps its task works under (spend.go), as
	// tree.json said when it began.
	caps []spend.Cap
}

// iterate runs one iteration on node in lane l: it begins (durably), the
// context files and the prompt are written, the agent runs (waiting out
// usage and rate limits), the guards check its work when it says done,
// and the outcome is decided and recorded.
func (r *Runner) iterate(ctx context.Context, l lane.Lane, t *tree.Tree, ix *tree.Index, node *tree.Node) error {
	it, err := r.open(ctx, l, t, ix, node)
	if err != nil {
		return err
	}
	return r.work(ctx, it)
}

// open puts the lane's working tree where node's iteration starts,
// chooses its executor, and begins it.
func (r *Runner) open(ctx context.Context, l lane.Lane, t *tree.Tree, ix *tree.Index, node *tree.Node) (*underway, error) {
	if err := l.Here().Tree().StartTask(ctx, node.ID, r.ledger.State().LastNode); err != nil {
		return nil, err
	}
	rung := r.rungOf(ix, node)
	name := ""
	if rung != nil {
		name = rung.Executor
	}
	ex, err := r.chooseExecutor(ctx, l.Here().Out(), name)
	if err != nil {
		return nil, err
	}
	it, err := r.begin(l, t, ix, node, ex)
	if it != nil {
		it.meta.Rung = rung
	}
	return it, err
}

// work carries a begun iteration on: the work on its task started in its
// lane (its checks run on the untouched checkpoint before its first
// attempt), its agent, then what follows.
func (r *Runner) work(ctx context.Context, it *underway) error {
	it.lane.Start(ctx, it.node, it.meta)
	res, err := r.runAgent(ctx, it)
	if err != nil || res == nil {
		if it.meta.Phase == state.PhaseAborted {
			// Set aside: nothing of it runs again, its temporary folder goes.
			r.env.Rooms.RemoveTempDir(it.n)
		}
		return err // set aside without an attempt, or a failure of the runner's own
	}
	return r.agentFinished(ctx, it.lane, it.meta, res)
}

// begin starts iteration n on node in lane l: the ledger's durable mark,
// and while it is made durable, the context files and the prompt; then
// the run folder with the prompt sent.
func (r *Runner) begin(l lane.Lane, t *tree.Tree, ix *tree.Index, node *tree.Node, ex *link) (*underway, error) {
	here := l.Here()
	n := r.ledger.NextIteration()
	here.Tree().Begun(n)
	if err := r.watchForgery(l); err != nil {
		return nil, err
	}
	start, started := r.ledger.Begin(n, node.ID, node.Attempts, here.Slot())
	if here.Judged().RunnerDir != "" {
		r.ledger.JudgesRunnerFiles(n)
	}
	prep, err := r.prepareIteration(t, ix, node, here.Slot() > 0)
	if serr := started(); serr != nil {
		// Not under way: the started record did not reach the disk.
		return nil, errors.Join(serr, err)
	}
	it := &underway{n: n, node: node, prep: prep, link: ex, lane: l, caps: r.capsOf(ix, node.ID), meta: &state.Meta{
		Iteration: n, Node: node.ID, NodePath: ix.Path(node.ID),
		Attempt: node.Attempts + 1, MaxAttempts: node.AttemptLimit(r.cfg.Loop.MaxAttempts), Attempts: node.Attempts,
		Phase: state.PhaseStarted, StartedAt: start, Slot: here.Slot(), Executor: ex.name(),
		CheckSpecs: lane.CheckSpecs(tree.ChecksOf(t, node.ID)), Removes: tree.RemovesOf(t, node.ID), Unconfined: here.Unconfined(), Openings: here.Openings(),
	}}
	room, tmp, rerr := here.Room(n)
	if err == nil {
		err = rerr
	}
	runDir := r.p.RunDir(n)
	if err == nil {
		err = prompt.WriteRunFolder(runDir, n, node.ID, prep.Pack)
		r.cache.prompts.keep(n, node.ID, prep.Pack)
	}
	if err != nil {
		// A failure of the runner's own, before any agent ran: no attempt.
		return nil, r.failedBeforeAgent(it.meta, err)
	}
	// meta.json is first written when the agent is done (or waits out a
	// rate limit): until then the ledger's in-flight marker says all a
	// resuming runner needs, and one that finds no meta.json rebuilds it
	// from the marker and the tree (resume.go).
	it.meta.Prompt = state.PromptMeta{Bytes: len(prep.Pack.Text), Budget: prep.Pack.Budget, Dropped: dropped(prep.Pack)}
	it.req = executor.Request{
		Root:       here.Dir(),
		RunnerDir:  r.p.Dir,
		RunDir:     runDir,
		Iteration:  n,
		NodeID:     node.ID,
		Prompt:     []byte(prep.Pack.Text),
		PromptFile: filepath.Join(runDir, "prompt.md"),
		SchemaFile: r.p.Schema(),
		Confine:    room,
		OutputDir:  tmp,
		Env:        lane.TempEnv(tmp),
		OnStart: func(pid, pgid int) {
			r.env.Lock.Inside(func() {
				if r.cache.agentIteration != n {
					// The first agent run of the iteration: whatever it and
					// later runs leave behind has a later process id.
					r.cache.agentIteration, r.cache.agentMark = n, proc.MarkPIDs(pid)
					r.agentStarted(it)
				}
				r.ledger.AgentStarted(n, pgid)
			})
		},
	}
	return it, nil
}

// agentStarted says that the first agent run of iteration it started:
// a line in the progress output, and the live area on a terminal.
func (r *Runner) agentStarted(it *underway) {
	r.startedOn(it.lane.Here(), it.meta, "")
}

// startedOn says that iteration m's agent started in lane l, on worker
// ("" for this machine): a line in the progress output, and the live
// area on a terminal.
func (r *Runner) startedOn(l *lane.Local, m *state.Meta, worker string) {
	on := ""
	if worker != "" {
		on = ", worker " + inert.Line(worker)
	}
	fmt.Fprintf(l.Out(), "#%d %-24s started: attempt %d of %d, on %s%s%s\n", m.Iteration, inert.Line(m.NodePath), m.Attempt, m.MaxAttempts, inert.Line(m.Executor), inert.Line(rungNote(m)), on)
	if r.opts.Live != nil {
		r.opts.Live.Started(m.Iteration, l.Slot(), m.NodePath, filepath.Join(r.p.RunDir(m.Iteration), "events.jsonl"))
	}
}

// iterationEnded takes iteration n off the live area.
func (r *Runner) iterationEnded(n int) {
	if r.opts.Live != nil {
		r.opts.Live.Ended(n)
	}
}

// runAgent runs the iteration's agent in its lane. A run that hits a
// usage or rate limit spends no attempt: the next iteration runs on
// another executor of the chain, or the runner waits and runs the agent
// again on the same node, in the same run folder (waitOutRateLimit). It
// returns the last run's result, or nil (and the error to end the run
// with, if any) when the iteration ended without one: the agent could
// not be started, it goes on with another executor (errNoIteration), a
// wait was interrupted, stopped, or outlasted loop.max_wait, or the lane
// brought no result back (recorded).
func (r *Runner) runAgent(ctx context.Context, it *underway) (*executor.Result, error) {
	opts := r.optionsFor(it.link.exec)
	meta := it.meta
	var waited time.Duration
	var live *spend.Live // its usage counted toward the run's caps until booked
	defer func() { live.End() }()
	for retry := 0; ; retry++ {
		it.req.Retry = retry
		noted := it.link.Noted()
		opts.Allowance = r.allowance(it.caps, meta.Node, meta.Usage)
		live.End()
		live = r.meter.Begin(opts.Allowance)
		// The agent's run: what it removed of the runner's files is put
		// back before anything is written, what it changed of its judges
		// kept and put back (package lane). Under a cap its iteration
		// already reached, it does not start.
		var out lane.Result
		var err error
		if h := opts.Allowance.Exhausted(); h != nil {
			out.Agent = notStarted(h)
		} else {
			out, err = it.lane.Run(ctx, lane.Spec{Meta: meta, Request: it.req, Executor: opts, Name: it.link.name(), Preset: it.link.exec.Preset})
		}
		if err != nil {
			return nil, err
		}
		if out.Agent == nil && out.StartErr == nil {
			return nil, r.noResult(ctx, it.lane, meta, out)
		}
		if err := r.noteTamper(it.lane, meta, out.Tamper); err != nil {
			return nil, err
		}
		if out.StartErr != nil {
			return nil, r.startFailed(ctx, it, out.StartErr)
		}
		res := out.Agent
		executor.NoteRun(meta, res)
		noteCostCap(meta, res, "agent")
		if out.Unavailable != nil && ctx.Err() == nil && len(meta.Tamper) == 0 {
			return nil, r.startFailed(ctx, it, out.Unavailable)
		}
		if res.Class != executor.ClassRateLimited || ctx.Err() != nil || len(meta.Tamper) > 0 {
			if res.Class != executor.ClassInterrupted {
				it.link.Ran(noted)
			}
			// The usage reaches run_state.json with the next save of the
			// in-flight marker, so it is counted exactly once.
			r.ledger.AddUsage(meta.Executor, meta.Node, meta.Usage)
			return res, nil
		}
		if done, err := r.waitOutRateLimit(ctx, it, res, &waited); done {
			return nil, err
		}
	}
}

// noResult ends an iteration whose agent run in lane l brought no result
// (lane.Result): set aside without an attempt when nothing ran, recorded
// as interrupted when its result was lost.
func (r *Runner) noResult(ctx context.Context, l lane.Lane, meta *state.Meta, out lane.Result) error {
	switch {
	case out.NotRun != nil:
		return r.failedBeforeAgent(meta, out.NotRun)
	case out.Aside != "":
		r.iterationEnded(meta.Iteration)
		if err := r.ledger.SetAside(meta, out.Aside+"; no attempt was spent", errors.New(out.Aside)); err != nil {
			return err
		}
		return errNoIteration
	}
	r.iterationEnded(meta.Iteration)
	if meta.Agent == nil {
		meta.Agent = &state.AgentMeta{Class: executor.ClassInterrupted}
	}
	if err := r.recordInterrupted(ctx, l, meta, out.Lost); err != nil || out.After == nil {
		return err
	}
	return out.After()
}

// agentFinished carries an iteration on from its agent's last run, res,
// already in meta.Agent (its usage counted): the message saved, the
// guards run when the agent says done, the outcome recorded, and the run
// stopped when the agent failed loop.max_consecutive_errors times in a
// row. A runner
// resuming an iteration whose agent had finished comes in here too.
func (r *Runner) agentFinished(ctx context.Context, l lane.Lane, meta *state.Meta, res *executor.Result) error {
	if len(res.PermissionDenials) > 0 {
		var tools []string
		for _, d := range res.PermissionDenials {
			tools = append(tools, d.Tool)
		}
		r.log.Warn("the agent was refused tool calls (permission_denials in meta.json); check executor.args",
			"iteration", meta.Iteration, "node", meta.Node, "refused", strings.Join(tools, ", "))
	}
	r.ledger.CountAgentRun(meta.Executor, res.Class == executor.ClassInterrupted || res.Class == executor.ClassRateLimited || res.Class == executor.ClassCostCap, res.AgentFailed)
	if ctx.Err() != nil {
		return r.recordInterrupted(ctx, l, meta, "the run was interrupted by a signal while the agent was working")
	}
	if res.Message != nil {
		// The message goes into meta.json too, which is made durable
		// before anything depends on it; output.json is the copy for
		// people and is not fsynced.
		raw, err := json.Marshal(res.Message)
		if err != nil {
			return fmt.Errorf("encode the agent's message: %w", err)
		}
		meta.Message = raw
		if err := fsutil.ReplaceJSON(filepath.Join(r.p.RunDir(meta.Iteration), "output.json"), res.Message, fsutil.NotSynced); err != nil {
			return err
		}
		if res.Class == executor.ClassOK {
			meta.AgentStatus = res.Message.Status
		}
		meta.Summary = res.Message.Summary
	}
	// The phase is made durable when the guards or a review come next.
	if err := r.ledger.AgentDone(meta, r.guardsWillRun(meta) || review.Wanted(r.cfg, meta)); err != nil {
		return err
	}
	if err := r.finish(ctx, l, meta); err != nil {
		return err
	}
	return r.tooManyFailures(meta, res)
}

// finish runs the guards of an iteration whose agent is done (when it
// says done and guards are configured) and records the outcome. A runner
// resuming an iteration left in phase agent_done comes in here.
func (r *Runner) finish(ctx context.Context, l lane.Lane, meta *state.Meta) error {
	meta.Guard = state.GuardSkipped
	ran := r.guardsWillRun(meta)
	taken := true
	if len(meta.Tamper) == 0 && meta.AgentStatus == "done" {
		// The work is taken as a tree before anything judges it.
		var err error
		if taken, err = l.Here().Tree().TakeJudged(ctx, r.cfg, meta); err != nil {
			return err
		}
		if taken && r.emptyDone(meta) {
			taken = false
			if err := r.failEmptyDone(meta); err != nil {
				return err
			}
		}
	}
	if len(meta.Tamper) > 0 {
		// The attempt changed its judges: it fails without them running.
		ran = false
		if err := r.failTampered(meta); err != nil {
			return err
		}
	} else if !taken {
		ran = false // failed: too large to take (runbranch.Tree.TakeJudged)
	} else if ran {
		results, verdict, err := l.Judge(ctx, meta, r.judged(l, meta))
		if err != nil || ctx.Err() != nil {
			// Interrupted: the agent's work is recorded, and the guards run
			// again on resume.
			return err
		}
		meta.Guards = results
		meta.Guard = verdict
		if verdict == state.GuardPass && len(results) == 0 && allVacuous(meta) {
			meta.Note = strings.TrimSpace(meta.Note + " judged only by checks that passed before any work: done rests on the agent's word")
		}
	} else if meta.AgentStatus == "done" {
		meta.Guard = state.GuardPass
		meta.Note = "no guards configured: done is trusted"
	}
	if err := r.ledger.GuardsDone(meta, ran || review.Wanted(r.cfg, meta)); err != nil {
		return err
	}
	return r.afterGuards(ctx, l, meta)
}

// abort ends an iteration whose agent could not be started (a missing
// program, a bad working directory): a configuration problem, not an
// attempt. The node's attempts stay as they are and nothing is left in
// flight; the run folder keeps the prompt and a meta.json saying why.
func (r *Runner) abort(meta *state.Meta, cause error) error {
	r.iterationEnded(meta.Iteration)
	note := "the agent could not be started: " + cause.Error()
	if _, ok := errors.AsType[*executor.UnavailableError](cause); ok {
		note = cause.Error() + "; no attempt was spent"
	}
	if err := r.ledger.SetAside(meta, note, cause); err != nil {
		return errors.Join(cause, err)
	}
	return cause
}

// failedBeforeAgent ends an iteration whose preparation failed in the
// runner's own I/O (a full disk, a read-only file) before its agent
// started: set aside with no attempt spent, as far as the failure lets
// the runner write that. When it cannot, the iteration stays in flight,
// and the next runner finds that no agent started (resume.go).
func (r *Runner) failedBeforeAgent(meta *state.Meta, cause error) error {
	r.iterationEnded(meta.Iteration)
	cause = fmt.Errorf("prepare iteration %d: %w", meta.Iteration, cause)
	if err := r.ledger.SetAside(meta, "the runner could not prepare the iteration: "+cause.Error(), cause); err != nil {
		r.log.Warn("could not record that the iteration was set aside; the next run does", "iteration", meta.Iteration, "err", err)
	} else {
		r.env.Rooms.RemoveTempDir(meta.Iteration)
	}
	return cause
}

package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/runner-cli/runner/internal/config"
	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/lane"
	"github.com/runner-cli/runner/internal/prompt"
	"github.com/runner-cli/runner/internal/review"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// resumeLeft resolves what a previous runner left in flight, one
// iteration at a time (ledger.Left), each made durable before the next,
// so that an older in-flight marker is never resolved after a newer
// iteration was recorded.
func (r *Runner) resumeLeft(ctx context.Context) error {
	for {
		in, err := r.ledger.Left()
		if err != nil || in == nil {
			return err
		}
		if err := r.resume(ctx, in); err != nil {
			if ctx.Err() != nil {
				return err
			}
			return fmt.Errorf("%w\n(iteration %d, left unfinished by a runner that stopped, is resolved before anything else; "+
				"if this happens at every run, `runner abandon %d` sets it aside without spending an attempt)", err, in.Iteration, in.Iteration)
		}
		if err := r.ledger.Flush(); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// resume resolves the iteration in, which a previous runner left in
// flight, by the phase it had reached (SPEC §8). It first stops whatever
// the old agent left running. meta.json is written before the in-flight
// marker moves to a phase, so when meta.json is one phase ahead (the
// runner died between the two writes) its results are kept rather than
// thrown away.
func (r *Runner) resume(ctx context.Context, in *state.InFlight) error {
	var s *slot
	if in.Slot > 0 && r.par != nil {
		// Resolved in the slot it worked in: its work is there.
		var err error
		if s, err = r.slotFor(ctx, in.Slot); err != nil {
			return fmt.Errorf("resume iteration %d: %w", in.Iteration, err)
		}
	}
	return r.resumeIn(ctx, r.laneFor(s), in)
}

// resumeIn is resume in the lane the iteration worked in.
func (r *Runner) resumeIn(ctx context.Context, l lane.Lane, in *state.InFlight) error {
	r.ledger.Resume(true)
	defer r.ledger.Resume(false)
	lane.KillLeftovers(r.p, in, r.cfg.Executor.KillGrace.Duration, r.log)
	meta, phase, err := r.resumeMeta(ctx, in)
	if err != nil {
		return err
	}
	if phaseRank(phase) >= phaseRank(state.PhaseGuardsDone) && phase != state.PhaseAborted && phase != state.PhaseRecorded && wouldLand(meta) && !r.env.Branch.TaskLanded(ctx, meta) {
		// A verdict in meta.json (or in a record of the journal, or a
		// digest of either) is something an agent that outlived its
		// runner could have written: the guards judge the work again, and
		// the reviewer reviews it again (SPEC §20). A verdict that fails
		// the work is kept: it gives the agent nothing.
		r.log.Info("running the guards again on the work of an iteration whose runner stopped after judging it; what it recorded is not believed",
			"iteration", in.Iteration, "node", in.Node, "vouched", r.ledger.Vouched(meta))
		meta.Guards, meta.Guard, meta.Checks, meta.Review = nil, "", nil, nil
		phase = state.PhaseAgentDone
	}
	if phase != state.PhaseRecorded && phase != state.PhaseAborted {
		// The check of the protected paths made when the agent exited may
		// never have run: they are compared with the checkpoint first.
		tamper, err := l.Here().Tree().ProtectedSince(ctx, r.cfg.Verify.Protect, in.Iteration)
		if err != nil {
			return fmt.Errorf("resume iteration %d: %w", in.Iteration, err)
		}
		if err := r.noteTamper(l, meta, tamper); err != nil {
			return err
		}
	}
	if meta.Phase == state.PhaseReviewed && phaseRank(in.Phase) < phaseRank(state.PhaseReviewed) && meta.Review != nil {
		// The verdict's usage reaches run_state.json with the save that
		// moves the marker to reviewed, which never happened.
		r.ledger.AddReviewUsage(meta)
	}
	if phase == state.PhaseRecorded {
		// Recorded already, by a runner that died before its run state
		// (the death it noted among it) was saved.
		r.ledger.DeathOf(meta)
	}
	switch phase {
	case state.PhaseGuardsDone, state.PhaseReviewing, state.PhaseReviewed, state.PhaseRecorded:
		if review.Wanted(r.cfg, meta) {
			r.log.Info("asking the reviewer again about an iteration a previous runner left in its review", "iteration", in.Iteration, "node", in.Node)
		} else {
			r.log.Info("recording the results of an iteration a previous runner finished", "iteration", in.Iteration, "node", in.Node)
		}
		if meta.Phase != state.PhaseReviewed {
			meta.Phase = state.PhaseGuardsDone
		}
		return r.afterGuards(ctx, l, meta)
	case state.PhaseAgentDone:
		r.log.Info("running the guards of an iteration a previous runner left", "iteration", in.Iteration, "node", in.Node)
		meta.Phase = state.PhaseAgentDone
		return r.finish(ctx, l, meta)
	case state.PhaseAborted:
		// The agent could not be started: no attempt was spent.
		r.log.Warn("the previous runner could not start the agent", "iteration", in.Iteration, "node", in.Node, "note", meta.Note)
		return r.ledger.EndResumed(meta, meta.Note)
	default:
		return r.resumeStarted(ctx, l, in, meta)
	}
}

// resumeMeta is the record of iteration in, which a previous runner left
// in flight, and the phase it reached: its meta.json, or one rebuilt from
// the marker when the runner died before writing any; meta.json is
// written before the in-flight marker moves to a phase, so the later of
// the two stands.
func (r *Runner) resumeMeta(ctx context.Context, in *state.InFlight) (*state.Meta, string, error) {
	meta, err := r.ledger.LoadMeta(in.Iteration)
	if err != nil {
		return nil, "", fmt.Errorf("resume iteration %d: %w", in.Iteration, err)
	}
	phase := in.Phase
	if meta == nil {
		// The runner died before meta.json was first written, so nothing
		// of this iteration reached the tree: it was the node's next
		// attempt. meta.json is written at once, so that a crash while
		// this iteration is being recorded cannot count the attempt twice.
		t, err := r.treeForRecord(ctx, in.Iteration)
		if err != nil {
			return nil, "", err
		}
		meta = rebuiltMeta(r.p, r.cfg, in, t)
		meta.Phase = state.PhaseStarted
		if err := r.ledger.Rebuilt(meta); err != nil {
			return nil, "", fmt.Errorf("resume iteration %d: %w", in.Iteration, err)
		}
	} else {
		if phaseRank(meta.Phase) > phaseRank(phase) {
			phase = meta.Phase
		}
		if in.Phase == state.PhaseStarted {
			// run_state.json gets an iteration's usage and its count of
			// failed agent runs with the first save after its agent ran,
			// the one that moves the marker past started (or the one
			// after it is recorded); that save never happened, so they are
			// counted here, once.
			r.ledger.AddUsage(meta.Executor, meta.Node, meta.Usage)
			if meta.Agent != nil && meta.Phase != state.PhaseStarted {
				r.ledger.CountAgentRun(meta.Executor, meta.Agent.Class == executor.ClassInterrupted || meta.Agent.Class == executor.ClassRateLimited, meta.Agent.Failed)
			}
		}
	}
	return meta, phase, nil
}

// wouldLand reports whether the verdict meta holds would make its task
// done: the guards passed, and the reviewer, if it answered, approved.
func wouldLand(meta *state.Meta) bool {
	return meta.Guard != state.GuardFail && (meta.Review == nil || meta.Review.Verdict != state.VerdictReject) && meta.CostCap == nil
}

// resumeStarted resolves an iteration a previous runner left before its
// agent's results were saved. Only an agent that was working when the
// runner stopped costs an attempt (SPEC §8): a runner that stopped while
// it waited out a rate limit, or before the agent started (a failure of
// its own I/O, a kill between the two), spends none, and neither does an
// agent that had finished and left its final message, which is recorded
// as if the runner had seen it end.
func (r *Runner) resumeStarted(ctx context.Context, l lane.Lane, in *state.InFlight, meta *state.Meta) error {
	runDir := r.p.RunDir(in.Iteration)
	who := fmt.Sprintf("runner pid %d", in.RunnerPID)
	if res, found, err := l.Adopt(ctx, in, meta); found {
		if err != nil {
			return err
		}
		return r.adopted(ctx, l, meta, res)
	}
	if !agentBegan(in, meta, runDir) {
		if meta.Phase == state.PhaseWaiting {
			r.log.Warn("the previous runner stopped while it waited out a usage or rate limit; no attempt spent", "iteration", in.Iteration, "node", in.Node)
			return r.ledger.EndResumed(meta, who+" stopped while it waited out a usage or rate limit: no agent was running, no attempt was spent")
		}
		r.log.Warn("the previous runner stopped before the agent started; no attempt spent", "iteration", in.Iteration, "node", in.Node)
		return r.ledger.EndResumed(meta, who+" stopped before the agent started: no attempt was spent")
	}
	if res := r.recoverAgent(l.Here().Dir(), meta); res != nil {
		executor.NoteRun(meta, res)
		r.ledger.AddUsage(meta.Executor, meta.Node, res.Usage)
		if res.Class == executor.ClassRateLimited {
			r.log.Warn("the previous runner stopped after the agent hit a usage or rate limit; no attempt spent", "iteration", in.Iteration, "node", in.Node)
			return r.ledger.EndResumed(meta, who+" stopped after the agent hit a usage or rate limit: no attempt was spent")
		}
		r.log.Info("the previous runner stopped after the agent finished; recording what the agent left", "iteration", in.Iteration, "node", in.Node)
		meta.Note = "recorded from the files the agent left: " + who + " stopped, or could not write its records, after the agent finished"
		return r.agentFinished(ctx, l, meta, res)
	}
	r.log.Warn("the previous runner was interrupted while the agent worked; retrying its node", "iteration", in.Iteration, "node", in.Node, "runner_pid", in.RunnerPID)
	if meta.Agent == nil {
		meta.Agent = interruptedAgent(r.optionsNamed(meta.Executor), runDir, meta.StartedAt)
	}
	meta.RunnerDied, meta.RunnerDiedLife = in.RunnerPID, in.RunnerLife
	meta.NoAttempt = !r.ledger.Death(in.RunnerPID, in.RunnerLife, in.Node)
	if len(meta.Tamper) > 0 {
		// Its agent changed its judges before the runner died: an attempt
		// spent, whoever killed the runner.
		meta.NoAttempt = false
	}
	return r.recordInterrupted(ctx, l, meta, who+" stopped while the agent was working")
}

// adopted carries on an iteration its lane adopted (lane.Lane.Adopt): the
// agent's result taken, or how it ended without one.
func (r *Runner) adopted(ctx context.Context, l lane.Lane, meta *state.Meta, res lane.Result) error {
	switch {
	case res.Lost != "":
		return r.noResult(ctx, l, meta, res)
	case res.Agent == nil:
		return r.ledger.EndResumed(meta, res.Ended)
	}
	if err := r.noteTamper(l, meta, res.Tamper); err != nil {
		return err
	}
	executor.NoteRun(meta, res.Agent)
	r.ledger.AddUsage(meta.Executor, meta.Node, meta.Usage)
	if res.Ended != "" {
		return r.ledger.EndResumed(meta, res.Ended)
	}
	r.log.Info("recording an iteration a worker finished for a previous runner", "iteration", meta.Iteration, "node", meta.Node, "worker", meta.Worker)
	return r.agentFinished(ctx, l, meta, res.Agent)
}

// rebuiltMeta is the meta.json of iteration in, which a runner died in
// before writing any, rebuilt from its marker, the prompt's record and
// t (nil: no tree to read the task from): it was the task's next attempt.
func rebuiltMeta(p state.Paths, cfg *config.Config, in *state.InFlight, t *tree.Tree) *state.Meta {
	meta := &state.Meta{Iteration: in.Iteration, Node: in.Node, NodePath: in.Node, StartedAt: in.StartedAt, Phase: in.Phase,
		Slot: in.Slot, Executor: in.Executor, Prompt: promptSent(p.RunDir(in.Iteration))}
	if t == nil {
		return meta
	}
	ix := tree.NewIndex(t)
	if n := ix.Node(in.Node); n != nil {
		meta.NodePath = ix.Path(n.ID)
		meta.Attempt = n.Attempts + 1
		meta.MaxAttempts = n.AttemptLimit(cfg.Loop.MaxAttempts)
		meta.Attempts = n.Attempts
	}
	return meta
}

// promptSent is what an iteration's context.json says of the prompt it
// sent, for a meta.json rebuilt after the runner died before writing it;
// zero when the prompt was not written.
func promptSent(runDir string) state.PromptMeta {
	data, err := fsutil.ReadLimited(filepath.Join(runDir, "context.json"), 4<<20, true)
	if err != nil {
		return state.PromptMeta{}
	}
	var prov prompt.Provenance
	if json.Unmarshal(data, &prov) != nil {
		return state.PromptMeta{}
	}
	return state.PromptMeta{Bytes: prov.TotalBytes, Budget: prov.Budget, Dropped: dropped(&prompt.Pack{Sections: prov.Sections})}
}

// agentBegan tells, for an iteration a runner left in phase started (or
// waiting), whether its last agent run may have begun: after a rate limit,
// whether the runner got as far as marking the next run in executor.log;
// otherwise whether the agent's process group was recorded or its log
// exists (both come just before or after the agent starts).
func agentBegan(in *state.InFlight, meta *state.Meta, runDir string) bool {
	if meta.Agent != nil && len(meta.Agent.RateLimits) > 0 {
		return executor.RunBegan(runDir, len(meta.Agent.RateLimits), meta.Iteration)
	}
	return in.AgentPGID > 0 || executor.RunBegan(runDir, 0, meta.Iteration)
}

// recoverAgent returns the result of the agent run of an iteration a
// runner left in phase started, when that agent had finished: its exit
// record, final message or closing failure event is in the run folder
// although the runner never saved meta.json (it died, or could not write,
// right after the agent ended), its working tree dir. nil when the agent
// did not finish.
func (r *Runner) recoverAgent(dir string, meta *state.Meta) *executor.Result {
	req := executor.Request{
		Root: dir, RunnerDir: r.p.Dir, RunDir: r.p.RunDir(meta.Iteration),
		Iteration: meta.Iteration, NodeID: meta.Node,
		PromptFile: filepath.Join(r.p.RunDir(meta.Iteration), "prompt.md"), SchemaFile: r.p.Schema(),
	}
	res, err := executor.Recover(r.optionsNamed(meta.Executor), req)
	if err != nil {
		r.log.Warn("cannot read what the agent left; counting the iteration as interrupted", "iteration", meta.Iteration, "err", err)
		return nil
	}
	return res
}

// phaseRank orders the phases of an iteration.
func phaseRank(phase string) int {
	switch phase {
	case state.PhaseAgentDone:
		return 1
	case state.PhaseGuardsDone, state.PhaseReviewing:
		return 2
	case state.PhaseReviewed:
		return 3
	case state.PhaseRecorded, state.PhaseAborted:
		return 4
	}
	return 0
}

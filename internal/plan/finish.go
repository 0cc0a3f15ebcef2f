package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/textfmt"
	"github.com/runner-cli/runner/internal/tree"
)

// finish judges what the agent's run gave, writes the plan when it may,
// and records the planning run (ledger.Planned).
func (r *run) finish(ctx context.Context, res *executor.Result, runErr error) (*Result, error) {
	out := &Result{Iteration: r.n, Node: r.o.Node}
	err := r.judge(ctx, out, res, runErr)
	meta := r.meta
	meta.Outcome = out.Outcome
	finished := time.Now().UTC()
	meta.FinishedAt, meta.DurationMS = &finished, finished.Sub(meta.StartedAt).Milliseconds()
	meta.Phase = state.PhaseRecorded
	summary := ""
	if out.Message != nil {
		summary = textfmt.OneLine(out.Message.Summary, 200)
	}
	if rerr := r.l.Planned(meta, summary); rerr != nil {
		return out, errors.Join(err, rerr)
	}
	return out, err
}

// judge decides the outcome of the agent's run into out, and writes the
// plan when it is valid and may be written. The error says why it was
// not written.
func (r *run) judge(ctx context.Context, out *Result, res *executor.Result, runErr error) error {
	switch {
	case ctx.Err() != nil:
		out.Outcome = state.OutcomePlanInterrupted
		r.meta.Note = "the run was interrupted; nothing was written"
		return fmt.Errorf("plan: interrupted; nothing was written: %w", ctx.Err())
	case runErr != nil:
		out.Outcome = state.OutcomePlanFailed
		r.meta.Note = runErr.Error()
		return fmt.Errorf("plan: %w", runErr)
	}
	if res.Message != nil {
		if err := r.saveMessage(res.Message); err != nil {
			return err
		}
		out.Message = res.Message
	}
	switch {
	case res.Class != executor.ClassOK:
		out.Outcome = state.OutcomePlanFailed
		return fmt.Errorf("plan: the agent failed (%s): %s", res.Class, res.Error)
	case res.Message == nil:
		out.Outcome = state.OutcomePlanFailed
		return fmt.Errorf("plan: the agent gave no valid answer: %s", res.MessageError)
	case res.Message.Status == executor.StatusBlocked:
		out.Outcome = state.OutcomePlanBlocked
		return fmt.Errorf("plan: the agent could not plan: %s", textfmt.OneLine(res.Message.Summary, 400))
	case res.Message.Status != executor.StatusDecomposed:
		out.Outcome = state.OutcomePlanInvalid
		problem := fmt.Sprintf("the agent answered status %q; a plan is status decomposed, with the tasks in children", res.Message.Status)
		r.meta.Plan.Problems = []string{problem}
		return &InvalidError{Problems: []string{problem}}
	}
	return r.propose(out, res.Message)
}

// saveMessage keeps the agent's message in meta.json and output.json.
func (r *run) saveMessage(msg *executor.Message) error {
	raw, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("encode the agent's message: %w", err)
	}
	r.meta.Message, r.meta.AgentStatus, r.meta.Summary = raw, msg.Status, msg.Summary
	return fsutil.ReplaceJSON(filepath.Join(r.runDir, "output.json"), msg, fsutil.NotSynced)
}

// propose validates the plan, keeps it in the run folder, and writes it
// to tree.json unless this is a dry run.
func (r *run) propose(out *Result, msg *executor.Message) error {
	label := r.p.Rel(filepath.Join(r.runDir, "output.json"))
	var t *tree.Tree
	var err error
	if r.node != nil {
		t, err = Decomposition(r.cur.t, r.node.ID, msg.Children, label)
	} else {
		t, err = WholeTree(PlanRoot(r.cur.t, r.o.Documents), msg.Children, label)
	}
	if err != nil {
		out.Outcome = state.OutcomePlanInvalid
		var ie *InvalidError
		if errors.As(err, &ie) {
			r.meta.Plan.Problems = ie.Problems
		}
		return err
	}
	out.Tree, out.Tasks = t, count([]*tree.Node{t.Root})
	out.Planned = t.Root
	if r.node != nil {
		out.Planned, out.Tasks = t.Find(r.node.ID), count(msg.Children)
	}
	r.meta.Plan.Tasks = out.Tasks
	proposal := filepath.Join(r.runDir, ProposalFileName)
	if err := fsutil.ReplaceFile(proposal, tree.Marshal(t), 0o644, fsutil.NotSynced); err != nil {
		return err
	}
	out.Proposal, r.meta.Plan.Proposal = r.p.Rel(proposal), ProposalFileName
	if r.o.DryRun {
		out.Outcome = state.OutcomePlanDryRun
		return nil
	}
	return r.write(out, t, msg)
}

// write replaces tree.json with t, unless tree.json changed since it was
// read: the agent, or a person, wrote it meanwhile, and the plan would
// lose that. A tree replaced by a whole plan is kept first, durably, as
// tree.json.bak.N (N the iteration). The plan's assumptions and
// questions then go to the notes, for the agents that do the work.
func (r *run) write(out *Result, t *tree.Tree, msg *executor.Message) error {
	now, err := fsutil.ReadLimited(r.p.Tree(), tree.MaxFileSize, false)
	if errors.Is(err, os.ErrNotExist) {
		now, err = nil, nil
	}
	if err != nil {
		return err
	}
	if !bytes.Equal(now, r.cur.data) || (now == nil) != (r.cur.data == nil) {
		out.Outcome = state.OutcomePlanRefused
		problem := fmt.Sprintf("%s changed while the agent planned (the agent or a person wrote it), so the plan was not written over it. "+
			"Look at the change, then plan again, or copy the plan from %s", r.p.Rel(r.p.Tree()), out.Proposal)
		r.meta.Plan.Problems = []string{problem}
		return fmt.Errorf("plan: %s", problem)
	}
	if r.node == nil && r.cur.data != nil {
		backup := r.p.Tree() + ".bak." + strconv.Itoa(r.n)
		if err := fsutil.ReplaceFile(backup, r.cur.data, 0o644, fsutil.Durable); err != nil {
			return fmt.Errorf("plan: keep the current tree before replacing it: %w", err)
		}
		out.Backup = r.p.Rel(backup)
		r.meta.Plan.Backup = out.Backup
	}
	if err := tree.Save(r.p.Tree(), t); err != nil {
		return err
	}
	out.Outcome = state.OutcomePlanWritten
	if err := state.AppendNotes(r.p.Assumptions(), "Assumptions", r.n, out.Planned.ID, msg.Assumptions); err != nil {
		return err
	}
	return state.AppendNotes(r.p.Questions(), "Open Questions", r.n, out.Planned.ID, msg.Questions)
}

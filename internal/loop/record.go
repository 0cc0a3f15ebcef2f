package loop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/config"
	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/proc"
	"github.com/runner-cli/runner/internal/scrub"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// Values of run_state.last_status beyond the agent's own statuses.
const (
	LastStatusError       = "error"
	LastStatusInterrupted = "interrupted"
)

// outcome maps what the agent said and what the guards found to one of
// the outcomes of SPEC §6.
func outcome(m *state.Meta) string {
	if m.Agent == nil || m.Agent.Class != executor.ClassOK || m.AgentStatus == "" {
		return state.OutcomeExecutorError
	}
	switch m.AgentStatus {
	case "done":
		if m.Guard == state.GuardFail {
			return state.OutcomeGuardFailed
		}
		return state.OutcomeDone
	case "retry":
		return state.OutcomeRetry
	case "blocked":
		return state.OutcomeBlocked
	case "decomposed":
		return state.OutcomeDecomposed
	}
	return state.OutcomeExecutorError
}

// countsAsAttempt reports whether an outcome spends one of the node's attempts.
func countsAsAttempt(outcome string) bool {
	switch outcome {
	case state.OutcomeGuardFailed, state.OutcomeRetry, state.OutcomeExecutorError, state.OutcomeInterrupted:
		return true
	}
	return false
}

// record applies a finished iteration to the tree and the state files.
// Every change is written as an absolute value computed from meta, so
// recording the same iteration twice (after a crash in the middle of
// recording) gives the same result.
func (r *Runner) record(meta *state.Meta) error {
	r.stopEscapedAgent(meta.Iteration)
	runDir := r.p.RunDir(meta.Iteration)
	out := outcome(meta)
	if meta.Outcome == state.OutcomeInterrupted {
		out = state.OutcomeInterrupted
	}
	meta.Outcome = out
	var msg *executor.Message
	if out != state.OutcomeExecutorError && out != state.OutcomeInterrupted {
		m, err := readMessage(runDir, meta)
		if err != nil {
			return err
		}
		msg = m
	}

	t, err := r.loadTree()
	if err != nil {
		// Waiting for a person to fix tree.json may take long: the results
		// are saved and the in-flight marker moved to their phase first,
		// so that an interrupted wait loses nothing.
		if err := r.commitPhase(meta); err != nil {
			return err
		}
		if t, err = r.treeForRecord(meta.Iteration); err != nil {
			return err
		}
	}
	loaded := r.cache.trees.sum // what t was read from
	node := r.applyOutcome(t, meta, &msg)
	out = meta.Outcome

	r.rs.Iteration = meta.Iteration
	r.rs.LastNode = meta.Node
	r.rs.LastGuard = meta.Guard
	if r.rs.LastGuard == "" {
		r.rs.LastGuard = state.GuardSkipped
	}
	switch out {
	case state.OutcomeExecutorError:
		r.rs.LastStatus = LastStatusError
		r.rs.LastSummary = executorSummary(meta)
	case state.OutcomeInterrupted:
		r.rs.LastStatus = LastStatusInterrupted
		r.rs.LastSummary = meta.Summary
	default:
		r.rs.LastStatus = meta.AgentStatus
		r.rs.LastSummary = meta.Summary
	}

	// The outcome is committed in this order, each write durable before
	// the next: meta.json (phase recorded), tree.json, the notes, the
	// journal line, and last run_state.json, whose cleared in_flight
	// marker is what says the iteration is recorded. A runner killed
	// before that records the iteration again on its next start, from
	// meta.json (which holds everything the agent and the guards
	// produced, even when the marker still says an earlier phase): every
	// write gives the same result a second time, notes and the journal
	// line are written only if they are missing, so the outcome is
	// applied exactly once. BENCHMARKS.md ("Durable writes") lists every
	// write of an iteration and why it is, or is not, fsynced.
	if meta.FinishedAt == nil {
		finished := time.Now().UTC()
		meta.FinishedAt = &finished
		meta.DurationMS = finished.Sub(meta.StartedAt).Milliseconds()
	}
	meta.Phase = state.PhaseRecorded
	// meta.json must be durable before tree.json takes its new content;
	// the tree is validated, encoded and written to its temporary file
	// meanwhile, and only renamed once meta.json is on disk.
	metaSaved := make(chan error, 1)
	go func() { metaSaved <- r.saveMetaDurably(meta) }()
	var treeData []byte
	var treeRep *fsutil.Replacement
	var treeErr error
	if node != nil {
		treeData, treeRep, treeErr = tree.PrepareSave(r.p.Tree(), t)
	}
	if err := errors.Join(<-metaSaved, treeErr); err != nil {
		if treeRep != nil {
			treeRep.Abort()
		}
		return err
	}
	if treeRep != nil {
		if err := r.commitTree(meta, msg, t, treeData, treeRep, loaded); err != nil {
			return err
		}
		out = meta.Outcome
	}
	if msg != nil {
		if err := r.appendNotesOnce(r.p.Assumptions(), "Assumptions", meta, msg.Assumptions); err != nil {
			return err
		}
		questions := msg.Questions
		if out == state.OutcomeBlocked {
			questions = append([]string{"blocked: " + msg.Summary}, questions...)
		}
		if err := r.appendNotesOnce(r.p.Questions(), "Open Questions", meta, questions); err != nil {
			return err
		}
	}
	event := state.EventRecorded
	if out == state.OutcomeInterrupted {
		event = state.EventInterrupted
	}
	if err := r.journalOnce(state.Record{Iteration: meta.Iteration, Node: meta.Node, Event: event, AgentStatus: meta.AgentStatus,
		Guard: meta.Guard, Outcome: out, NodeStatus: meta.NodeStatus, Attempts: meta.Attempts,
		Summary: oneLine(r.rs.LastSummary, 300)}); err != nil {
		return err
	}
	r.rs.InFlight = nil
	// The cleared marker is not written here. When the loop goes on, the
	// next iteration's started marker, a durable write of the whole run
	// state, replaces it; otherwise flushState writes it before the runner
	// waits or exits. Until then run_state.json still names this iteration
	// in flight, and a runner started after a crash meanwhile records it
	// again from meta.json, which changes nothing a second time: the tree
	// gets the same absolute values, notes and the journal line are
	// written only if they are missing.
	r.stateDirty = true
	r.progress(meta)
	r.pruneRuns(meta.Iteration)
	return nil
}

// applyOutcome applies meta's outcome to t: a decomposition's children,
// then the node's status and attempts (apply), and notes the result in
// meta. Children that do not fit the tree (an id already used, say) make
// the message invalid: the outcome becomes an executor error, which the
// next attempt is told about, and *msg is cleared. It returns the node,
// or nil when it was removed from the tree.
func (r *Runner) applyOutcome(t *tree.Tree, meta *state.Meta, msg **executor.Message) *tree.Node {
	node := findNode(t.Root, meta.Node)
	if node == nil {
		meta.Note = fmt.Sprintf("node %s was removed from the tree during the iteration; outcome not applied", meta.Node)
		r.log.Warn("the node was removed from the tree during the iteration; outcome not applied", "iteration", meta.Iteration, "node", meta.Node)
		return nil
	}
	if meta.Outcome == state.OutcomeDecomposed && len(node.Children) == 0 {
		if err := t.AddChildren(nil, node.ID, (*msg).Children); err != nil {
			meta.Outcome = state.OutcomeExecutorError
			meta.Agent.Class = executor.ClassAgentError
			meta.Agent.Error = "invalid decomposition: " + err.Error()
			*msg = nil
		}
	}
	r.apply(node, meta, *msg)
	t.Normalize()
	meta.NodeStatus = string(node.EffectiveStatus())
	meta.Attempts = node.Attempts
	return node
}

// commitTree gives tree.json the content prepared in rep, unless a person
// changed the file since it was read (loaded): then the outcome is
// applied again to their version, so that their edit is kept. It tries a
// few times; a file rewritten faster than that gets the last version
// applied to. meta.json is rewritten (not fsynced) when the node's status
// in the person's version came out differently.
func (r *Runner) commitTree(meta *state.Meta, msg *executor.Message, t *tree.Tree, data []byte, rep *fsutil.Replacement, loaded fileSum) error {
	outcome, status, attempts := meta.Outcome, meta.NodeStatus, meta.Attempts
	for try := 0; try < 5 && sumFile(r.p.Tree()) != loaded; try++ {
		rep.Abort()
		r.log.Info("tree.json changed while the outcome was being recorded; applying it to the new version", "iteration", meta.Iteration)
		next, err := r.treeForRecord(meta.Iteration)
		if err != nil {
			return err
		}
		t, loaded = next, r.cache.trees.sum
		if r.applyOutcome(t, meta, &msg) == nil || meta.Outcome != outcome {
			// Removed meanwhile, or its children no longer fit: what
			// meta.json says about the node stands for the journal.
			r.log.Warn("the outcome could not be applied as recorded to the edited tree.json", "iteration", meta.Iteration, "node", meta.Node, "note", meta.Note)
		}
		if data, rep, err = tree.PrepareSave(r.p.Tree(), t); err != nil {
			return err
		}
	}
	if err := rep.Commit(fsutil.Durable); err != nil {
		return err
	}
	r.cache.trees.remember(data, t)
	if meta.Outcome != outcome || meta.NodeStatus != status || meta.Attempts != attempts {
		return state.SaveMetaAs(r.p.RunDir(meta.Iteration), meta, fsutil.NotSynced)
	}
	return nil
}

// saveState replaces run_state.json with the run state in memory, as
// durably as d says.
func (r *Runner) saveState(d fsutil.Durability) error {
	if err := state.SaveRunStateAs(r.p.RunState(), r.rs, d); err != nil {
		return err
	}
	r.stateDirty, r.stateOnDisk = false, true
	return nil
}

// flushState makes durable what the loop left for later: the journal's
// lazily appended records, then the run state that record left in memory
// only (the cleared in-flight marker). It is called before the runner
// waits, when it exits, and after it resolved an iteration a previous
// runner left, so that run_state.json never names an iteration in flight
// older than one recorded after it.
func (r *Runner) flushState() error {
	r.background.Wait()
	if r.journalDirty {
		if err := fsutil.SyncFile(r.p.Journal()); err != nil {
			// The run state must not get ahead of the journal.
			return fmt.Errorf("make the journal durable: %w", err)
		}
		r.journalDirty = false
	}
	if !r.stateDirty {
		return nil
	}
	return r.saveState(fsutil.Durable)
}

// flushStateOrLog is flushState where a failure can only be reported.
func (r *Runner) flushStateOrLog() {
	if err := r.flushState(); err != nil {
		r.log.Error("save the run state", "err", err)
	}
}

// commitPhase makes the phase meta has reached durable: meta.json, then
// the in-flight marker.
func (r *Runner) commitPhase(meta *state.Meta) error {
	if err := r.saveMetaDurably(meta); err != nil {
		return err
	}
	if r.rs.InFlight != nil && r.rs.InFlight.Iteration == meta.Iteration {
		r.rs.InFlight.Phase = meta.Phase
	}
	return r.saveState(fsutil.Durable)
}

// findNode returns the first node with the given id in depth-first
// order, as tree.Index does, without building an index.
func findNode(root *tree.Node, id string) *tree.Node {
	var found *tree.Node
	walk(root, func(n *tree.Node) {
		if found == nil && n.ID == id {
			found = n
		}
	})
	return found
}

// journalOnce appends rec to the journal unless, when resuming, the
// journal already holds the same event for the same iteration: a runner
// that records an iteration again after a crash writes its line once.
// The line is appended without an fsync (see journalLazy): until it is
// durable, a crash leaves the iteration in flight and the next runner
// records it again, which changes nothing a second time.
func (r *Runner) journalOnce(rec state.Record) error {
	if r.resuming {
		// The journal may have been rotated since (loop.keep_runs).
		for _, path := range []string{r.p.Journal(), r.p.OldJournal()} {
			has, err := journalHas(path, rec.Iteration, rec.Event)
			if err != nil {
				return err
			}
			if has {
				return nil
			}
		}
	}
	return r.journalLazy(rec)
}

// journalHas reports whether the journal holds a record of event for
// iteration. It streams the file; lines that do not decode (a torn last
// line, a person's edit) are skipped.
func journalHas(path string, iteration int, event string) (bool, error) {
	f, err := fsutil.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	key := []byte(fmt.Sprintf(`"iteration":%d,`, iteration))
	br := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if bytes.Contains(line, key) {
			var rec struct {
				Iteration int    `json:"iteration"`
				Event     string `json:"event"`
			}
			if json.Unmarshal(line, &rec) == nil && rec.Iteration == iteration && rec.Event == event {
				return true, nil
			}
		}
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("read %s: %w", path, err)
		}
	}
}

// apply changes node as the outcome table of SPEC §6 says.
func (r *Runner) apply(node *tree.Node, meta *state.Meta, msg *executor.Message) {
	switch meta.Outcome {
	case state.OutcomeDone:
		node.Status = tree.StatusDone
		node.BlockedReason = ""
	case state.OutcomeBlocked:
		node.Status = tree.StatusBlocked
		node.BlockedReason = oneLine(msg.Summary, 500)
	}
	if countsAsAttempt(meta.Outcome) {
		node.Attempts = meta.Attempt
		if node.Attempts >= node.AttemptLimit(r.cfg.Loop.MaxAttempts) {
			node.Status = tree.StatusBlocked
			node.BlockedReason = "attempts exhausted"
		}
	}
}

// appendNotesOnce appends items to a notes file. When resuming, a crash
// may have come between appending and recording: items whose line is
// already in the file in full are not appended again, and a line the
// crash tore is cut off and appended again in full.
func (r *Runner) appendNotesOnce(path, heading string, meta *state.Meta, items []string) error {
	if len(items) == 0 {
		return nil
	}
	if r.resuming {
		data, err := fsutil.ReadFile(path)
		if errors.Is(err, fsutil.ErrSymlink) || errors.Is(err, fsutil.ErrNotRegular) {
			data, err = nil, nil // not the runner's own file: the append replaces it
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("read %s: %w", r.p.Rel(path), err)
		}
		have := map[string]bool{}
		for _, line := range strings.SplitAfter(string(data), "\n") {
			have[line] = strings.HasSuffix(line, "\n")
		}
		var missing []string
		torn := string(data[bytes.LastIndexByte(data, '\n')+1:])
		cut := false
		for _, it := range items {
			lines := state.NoteLines(meta.Iteration, meta.Node, []string{it})
			if len(lines) == 1 && !have[lines[0]] {
				missing = append(missing, it)
				// A last line without its newline that begins one of these
				// lines is this runner's own append, torn by the crash.
				cut = cut || (torn != "" && strings.HasPrefix(lines[0], torn))
			}
		}
		items = missing
		if cut {
			if err := fsutil.Truncate(path, int64(len(data)-len(torn))); err != nil {
				return fmt.Errorf("cut a torn line off %s: %w", r.p.Rel(path), err)
			}
		}
	}
	return state.AppendNotes(path, heading, meta.Iteration, meta.Node, items)
}

// readMessage returns the agent's message: the copy in meta.json, or for
// a meta.json written without one, output.json.
func readMessage(runDir string, meta *state.Meta) (*executor.Message, error) {
	if len(meta.Message) > 0 {
		m, err := executor.ParseMessage(meta.Message)
		if err != nil {
			return nil, fmt.Errorf("parse the message in %s: %w", state.MetaFile(runDir), err)
		}
		return m, nil
	}
	path := filepath.Join(runDir, "output.json")
	data, err := fsutil.ReadLimited(path, 16<<20, true)
	if err != nil {
		return nil, fmt.Errorf("read the agent's message: %w", err)
	}
	m, err := executor.ParseMessage(data)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	return m, nil
}

func executorSummary(meta *state.Meta) string {
	if meta.Agent == nil {
		return "the agent did not run"
	}
	var b strings.Builder
	b.WriteString("The previous attempt failed in the executor: ")
	switch {
	case meta.Agent.Error != "":
		b.WriteString(meta.Agent.Error)
	case meta.Agent.MessageError != "":
		b.WriteString(meta.Agent.MessageError)
	case meta.Agent.Class == executor.ClassOK:
		b.WriteString("the final message did not have a usable status")
	default:
		b.WriteString(meta.Agent.Class)
	}
	if meta.Summary != "" {
		b.WriteString("\n\nThe agent's own summary: " + meta.Summary)
	}
	if meta.Agent.LogTail != "" && !strings.Contains(b.String(), meta.Agent.LogTail) {
		b.WriteString("\n\nLast lines of the agent's output:\n" + meta.Agent.LogTail)
	}
	return b.String()
}

// recordInterrupted records an iteration that did not get to finish: it
// counts as an attempt, and the retry is told the working tree may hold
// partial changes.
func (r *Runner) recordInterrupted(meta *state.Meta, why string) error {
	meta.Outcome = state.OutcomeInterrupted
	meta.AgentStatus = ""
	meta.Guard = state.GuardSkipped
	meta.Summary = fmt.Sprintf("Iteration %d was interrupted before it finished (%s). The working tree may hold partial changes from that attempt: check `git status` and `git diff` before building on them.", meta.Iteration, why)
	if meta.Agent != nil && meta.Agent.LogTail != "" {
		meta.Summary += "\n\nLast lines of the agent's output:\n" + meta.Agent.LogTail
	}
	return r.record(meta)
}

// resume resolves the iteration a previous runner left in flight, by the
// phase it had reached (SPEC §8). It first stops whatever the old agent
// left running. meta.json is written before the in-flight marker moves to
// a phase, so when meta.json is one phase ahead (the runner died between
// the two writes) its results are kept rather than thrown away.
func (r *Runner) resume(ctx context.Context) error {
	in := r.rs.InFlight
	r.resuming = true
	defer func() { r.resuming = false }()
	r.killLeftoverAgent(in)
	runDir := r.p.RunDir(in.Iteration)
	meta, err := state.LoadMeta(runDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("resume iteration %d: %w", in.Iteration, err)
	}
	phase := in.Phase
	if meta == nil {
		// The runner died before meta.json was first written, so nothing
		// of this iteration reached the tree: it was the node's next
		// attempt. meta.json is written at once, so that a crash while
		// this iteration is being recorded cannot count the attempt twice.
		if err := fsutil.MkdirAll(runDir, 0o755); err != nil {
			return fmt.Errorf("resume iteration %d: %w", in.Iteration, err)
		}
		meta = &state.Meta{Iteration: in.Iteration, Node: in.Node, NodePath: in.Node, StartedAt: in.StartedAt, Phase: state.PhaseStarted}
		t, err := r.treeForRecord(in.Iteration)
		if err != nil {
			return err
		}
		ix := tree.NewIndex(t)
		if n := ix.Node(in.Node); n != nil {
			meta.NodePath = ix.Path(n.ID)
			meta.Attempt = n.Attempts + 1
			meta.MaxAttempts = n.AttemptLimit(r.cfg.Loop.MaxAttempts)
			meta.Attempts = n.Attempts
		}
		if err := state.SaveMeta(runDir, meta); err != nil {
			return fmt.Errorf("resume iteration %d: %w", in.Iteration, err)
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
			if meta.Usage != nil {
				r.rs.Usage.Add(*meta.Usage)
			}
			if meta.Agent != nil && meta.Phase != state.PhaseStarted {
				r.countAgentFailure(meta.Agent.Class, meta.Agent.Failed)
			}
		}
	}
	switch phase {
	case state.PhaseGuardsDone, state.PhaseRecorded:
		r.log.Info("recording the results of an iteration a previous runner finished", "iteration", in.Iteration, "node", in.Node)
		meta.Phase = state.PhaseGuardsDone
		return r.record(meta)
	case state.PhaseAgentDone:
		r.log.Info("running the guards of an iteration a previous runner left", "iteration", in.Iteration, "node", in.Node)
		meta.Phase = state.PhaseAgentDone
		return r.finish(ctx, meta)
	case state.PhaseAborted:
		// The agent could not be started: no attempt was spent.
		r.log.Warn("the previous runner could not start the agent", "iteration", in.Iteration, "node", in.Node, "note", meta.Note)
		if err := r.journalOnce(state.Record{Iteration: meta.Iteration, Node: meta.Node, Event: state.EventAborted, Error: meta.Note}); err != nil {
			return err
		}
		r.rs.InFlight = nil
		return r.saveState(fsutil.Durable)
	default:
		return r.resumeStarted(ctx, in, meta)
	}
}

// resumeStarted resolves an iteration a previous runner left before its
// agent's results were saved. Only an agent that was working when the
// runner stopped costs an attempt (SPEC §8): a runner that stopped while
// it waited out a rate limit, or before the agent started (a failure of
// its own I/O, a kill between the two), spends none, and neither does an
// agent that had finished and left its final message, which is recorded
// as if the runner had seen it end.
func (r *Runner) resumeStarted(ctx context.Context, in *state.InFlight, meta *state.Meta) error {
	runDir := r.p.RunDir(in.Iteration)
	who := fmt.Sprintf("runner pid %d", in.RunnerPID)
	if !agentBegan(in, meta, runDir) {
		if meta.Phase == state.PhaseWaiting {
			r.log.Warn("the previous runner stopped while it waited out a usage or rate limit; no attempt spent", "iteration", in.Iteration, "node", in.Node)
			return r.endResumed(meta, who+" stopped while it waited out a usage or rate limit: no agent was running, no attempt was spent")
		}
		r.log.Warn("the previous runner stopped before the agent started; no attempt spent", "iteration", in.Iteration, "node", in.Node)
		return r.endResumed(meta, who+" stopped before the agent started: no attempt was spent")
	}
	if res := r.recoverAgent(meta); res != nil {
		var limits []state.RateLimitMeta
		if meta.Agent != nil {
			limits = meta.Agent.RateLimits
		}
		meta.Agent = agentMeta(res, limits)
		if res.Usage != nil {
			if meta.Usage == nil {
				meta.Usage = &state.Usage{}
			}
			meta.Usage.Add(*res.Usage)
			r.rs.Usage.Add(*res.Usage)
		}
		if res.Class == executor.ClassRateLimited {
			r.log.Warn("the previous runner stopped after the agent hit a usage or rate limit; no attempt spent", "iteration", in.Iteration, "node", in.Node)
			return r.endResumed(meta, who+" stopped after the agent hit a usage or rate limit: no attempt was spent")
		}
		r.log.Info("the previous runner stopped after the agent finished; recording what the agent left", "iteration", in.Iteration, "node", in.Node)
		meta.Note = "recorded from the files the agent left: " + who + " stopped, or could not write its records, after the agent finished (its exit status is unknown)"
		return r.agentFinished(ctx, meta, res)
	}
	r.log.Warn("the previous runner was interrupted while the agent worked; retrying its node", "iteration", in.Iteration, "node", in.Node, "runner_pid", in.RunnerPID)
	if meta.Agent == nil {
		meta.Agent = &state.AgentMeta{Class: executor.ClassInterrupted, LogTail: executor.LogTail(r.executorOptions(), runDir)}
	}
	return r.recordInterrupted(meta, who+" stopped while the agent was working")
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

// endResumed ends an iteration a previous runner left without an agent
// at work: no outcome, no attempt (meta.json phase aborted, an aborted
// journal record), like setAside, except that the usage of its agent
// runs was already counted by resume.
func (r *Runner) endResumed(meta *state.Meta, note string) error {
	meta.Phase = state.PhaseAborted
	meta.Note = note
	if err := state.SaveMeta(r.p.RunDir(meta.Iteration), meta); err != nil {
		return err
	}
	if err := r.journalOnce(state.Record{Iteration: meta.Iteration, Node: meta.Node, Event: state.EventAborted, Error: note}); err != nil {
		return err
	}
	r.rs.InFlight = nil
	return r.saveState(fsutil.Durable)
}

// resumeFromState resolves the iteration run_state.json names in flight.
func (r *Runner) resumeFromState(ctx context.Context) error {
	if r.rs.InFlight == nil {
		return nil
	}
	return r.resume(ctx)
}

// resumeFromJournal resolves an iteration whose started record is the
// journal's last one with nothing ending it, when the run state does not
// know of it: the runner died after the record was made durable and
// before run_state.json got the in-flight marker (see whileAgentRuns). It
// is resolved like any iteration left in phase started.
func (r *Runner) resumeFromJournal(ctx context.Context) error {
	rec, err := state.UnfinishedStart(r.p.Journal())
	if err != nil {
		return fmt.Errorf("look for an unfinished iteration: %w", err)
	}
	if rec == nil || rec.Iteration <= r.rs.Iteration || r.rs.InFlight != nil {
		return nil
	}
	r.rs.InFlight = &state.InFlight{Iteration: rec.Iteration, Node: rec.Node, Phase: state.PhaseStarted, RunnerPID: rec.RunnerPID, StartedAt: rec.Time}
	return r.resume(ctx)
}

// killLeftoverAgent stops what the agent or the guards of a dead runner's
// in-flight iteration left running, so that two agents never work in the
// repository at once. A supervisor normally does that by itself when its
// runner dies (see proc.Supervise); what is found here is what a
// supervisor is still stopping, or what was left when the supervisor was
// killed too. On Linux it first stops the supervised commands' cgroups
// that hold a process with this repository's RUNNER_DIR and the
// iteration's RUNNER_ITERATION in its environment (with everything in
// them, also what cleared its environment), then every process group
// holding such a process. That finds them also when the runner died
// before recording the agent's group id, and never hits a group whose id
// was reused after a reboot. Elsewhere it kills the group recorded in
// in_flight.
func (r *Runner) killLeftoverAgent(in *state.InFlight) {
	grace := r.cfg.Executor.KillGrace.Duration
	var groups []int
	if runtime.GOOS == "linux" {
		marks := []string{"RUNNER_DIR=" + r.p.Dir, "RUNNER_ITERATION=" + strconv.Itoa(in.Iteration)}
		for _, cg := range proc.CgroupsWithEnv(marks...) {
			r.log.Warn("killing the cgroup of an agent or guard left by a previous runner", "cgroup", cg, "iteration", in.Iteration)
			if err := proc.KillCgroup(cg, grace); err != nil {
				r.log.Error("could not kill the leftover cgroup", "cgroup", cg, "err", err)
			}
		}
		groups = proc.GroupsWithEnv(marks...)
		if in.AgentPGID > 1 && !slices.Contains(groups, in.AgentPGID) && proc.GroupAlive(in.AgentPGID) {
			r.log.Warn("the process group recorded for the previous agent is alive but holds no process of that agent (its id was probably reused); leaving it alone",
				"pgid", in.AgentPGID, "iteration", in.Iteration)
		}
	} else if in.AgentPGID > 1 {
		groups = []int{in.AgentPGID}
	}
	for _, pg := range groups {
		if !proc.GroupAlive(pg) {
			continue
		}
		r.log.Warn("killing the agent process group left by a previous runner", "pgid", pg, "iteration", in.Iteration)
		if err := proc.KillGroup(pg, grace); err != nil {
			r.log.Error("could not kill the leftover agent", "pgid", pg, "err", err)
		}
	}
}

// stopEscapedAgent stops what is left of iteration n's agent when the
// iteration is recorded. It is the last fallback: the agent's supervisor
// has already stopped its group, its cgroup and every process below it
// before the agent's run returned, so what is found here escaped all
// three (a process moved to another cgroup and adopted by another
// subreaper), or ran without a supervisor (not Linux, or no
// /proc/self/exe). It is found, on Linux only, by this repository's
// RUNNER_DIR and the iteration's RUNNER_ITERATION in its environment; a
// process that cleared its environment as well is not.
func (r *Runner) stopEscapedAgent(n int) {
	if runtime.GOOS != "linux" {
		return
	}
	// Only processes started since this iteration's agent need a look; a
	// runner resuming the iteration knows no such point and looks at all.
	var since proc.PIDMark
	if r.cache.agentIteration == n {
		since = r.cache.agentMark
	}
	for _, pg := range proc.GroupsWithEnvSince(since, "RUNNER_DIR="+r.p.Dir, "RUNNER_ITERATION="+strconv.Itoa(n)) {
		r.log.Warn("stopping processes the agent left running outside its process group", "pgid", pg, "iteration", n)
		if err := proc.KillGroup(pg, r.cfg.Executor.KillGrace.Duration); err != nil {
			r.log.Error("could not stop the agent's processes", "pgid", pg, "err", err)
		}
	}
}

// phaseRank orders the phases of an iteration.
func phaseRank(phase string) int {
	switch phase {
	case state.PhaseAgentDone:
		return 1
	case state.PhaseGuardsDone:
		return 2
	case state.PhaseRecorded, state.PhaseAborted:
		return 3
	}
	return 0
}

// progress prints the one line a user sees per iteration. meta.json is
// shared with the agent, so what it says is escaped.
func (r *Runner) progress(m *state.Meta) {
	agent := m.AgentStatus
	if (agent == "" || m.Outcome == state.OutcomeExecutorError) && m.Agent != nil {
		agent = m.Agent.Class
	}
	if m.Outcome == state.OutcomeInterrupted {
		agent = "interrupted"
	}
	next := m.NodeStatus
	if next == "" {
		next = "removed"
	}
	if next == string(tree.StatusOpen) {
		next = fmt.Sprintf("open, attempt %d of %d used", m.Attempts, m.MaxAttempts)
	}
	dur := time.Duration(m.DurationMS) * time.Millisecond
	fmt.Fprintf(r.opts.Progress, "#%d %-24s agent: %-10s guards: %-7s → %s (%s)\n",
		m.Iteration, inert.Line(m.NodePath), inert.Line(agent), inert.Line(m.Guard), inert.Line(next), dur.Round(100*time.Millisecond))
}

// runCache is what a Runner keeps between iterations to avoid repeating
// work: the last tree.json read or written, the last config.toml read,
// the run folder whose entry in runs/ is known to be durable, the run
// folders pruning knows about, and where the last agent's process ids
// start.
type runCache struct {
	trees     treeCache
	configs   configCache
	syncedRun int
	runs      []int // run folder numbers, oldest first; nil until listed

	// Where process ids stood when the agent of agentIteration started.
	agentIteration int
	agentMark      proc.PIDMark

	// The compiled secret scrubber and rate limit patterns, with the
	// settings they were built from.
	scrubber    *scrub.Scrubber
	scrubberKey string
	patterns    []*regexp.Regexp
	patternsKey string
}

// treeCache remembers the tree.json the runner last read or wrote, by
// the fileSum of its bytes, and parsed, so that reading the file again
// when it has not changed costs a hash and a Clone instead of a parse.
type treeCache struct {
	sum  fileSum
	tree *tree.Tree // owned by the cache; handed out as clones
	buf  []byte     // reused to read the file
}

// load reads and parses the tree file at path, like tree.Load, and also
// returns the fileSum of what it read (of the file, when it could not be
// read), which a wait compares the file with.
func (c *treeCache) load(path string) (*tree.Tree, fileSum, error) {
	// Parse keeps nothing of the bytes it reads, so one buffer serves
	// every read.
	data, err := fsutil.ReadLimitedInto(c.buf, path, tree.MaxFileSize, true)
	if err != nil {
		return nil, sumFile(path), err
	}
	c.buf = data
	sum := sumBytes(data)
	if c.tree != nil && sum == c.sum {
		return c.tree.Clone(), sum, nil
	}
	t, err := tree.Parse(fsutil.DisplayPath(path), data)
	if err != nil {
		c.tree = nil
		return nil, sum, err
	}
	c.sum, c.tree = sum, t.Clone()
	return t, sum, nil
}

// remember records that the file now holds data, the canonical form of
// t. The cache keeps t itself: the caller must not change it afterwards.
func (c *treeCache) remember(data []byte, t *tree.Tree) {
	c.sum, c.tree = sumBytes(data), t
}

// configCache remembers the config.toml the runner last read, by the
// fileSum of its bytes, so that an unchanged file is not parsed again.
type configCache struct {
	sum fileSum
	cfg *config.Config // shared: never changed once parsed
}

// load reads and parses the config file at path, like config.Load, and
// also returns the fileSum of what it read.
func (c *configCache) load(path string) (*config.Config, fileSum, error) {
	data, err := fsutil.ReadLimited(path, config.MaxFileSize, true)
	if err != nil {
		_, err = config.Load(path) // its error says what to do about it
		return nil, sumFile(path), err
	}
	sum := sumBytes(data)
	if c.cfg != nil && sum == c.sum {
		return c.cfg, sum, nil
	}
	cfg, err := config.Parse(fsutil.DisplayPath(path), data)
	if err != nil {
		c.cfg = nil
		return nil, sum, err
	}
	c.sum, c.cfg = sum, cfg
	return cfg, sum, nil
}

// recoverAgent returns the result of the agent run of an iteration a
// runner left in phase started, when that agent had finished: its final
// message is in the run folder although the runner never saved meta.json
// (it died, or could not write, right after the agent ended). nil when
// the agent did not finish.
func (r *Runner) recoverAgent(meta *state.Meta) *executor.Result {
	req := executor.Request{
		Root: r.p.Root, RunnerDir: r.p.Dir, RunDir: r.p.RunDir(meta.Iteration),
		Iteration: meta.Iteration, NodeID: meta.Node,
		PromptFile: filepath.Join(r.p.RunDir(meta.Iteration), "prompt.md"), SchemaFile: r.p.Schema(),
	}
	res, err := executor.Recover(r.executorOptions(), req)
	if err != nil {
		r.log.Warn("cannot read what the agent left; counting the iteration as interrupted", "iteration", meta.Iteration, "err", err)
		return nil
	}
	return res
}

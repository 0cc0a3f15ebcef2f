package loop

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/config"
	contextfiles "github.com/runner-cli/runner/internal/context"
	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/guard"
	"github.com/runner-cli/runner/internal/proc"
	"github.com/runner-cli/runner/internal/prompt"
	"github.com/runner-cli/runner/internal/scrub"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// Bounds on what is read back into a prompt.
const (
	failureLimit = 16 << 10         // tail of failure.log kept in failure.md
	notesLimit   = state.NotesLimit // assumptions.md / questions.md read for the prompt
)

// Prepared is everything one iteration sends to the agent.
type Prepared struct {
	Files contextfiles.Files
	Pack  *prompt.Pack
}

// Prepare renders the context files and the prompt pack for node, given
// where the previous iteration left off. It writes nothing; `runner prompt`
// uses it to show the next prompt without running anything.
func Prepare(p state.Paths, cfg *config.Config, t *tree.Tree, ix *tree.Index, node *tree.Node, rs *state.RunState) (*Prepared, error) {
	scrubber, err := newScrubber(cfg)
	if err != nil {
		return nil, err
	}
	return prepare(p, cfg, scrubber, t, ix, node, rs)
}

// prepare is Prepare with the scrubber built from cfg.
func prepare(p state.Paths, cfg *config.Config, scrubber *scrub.Scrubber, t *tree.Tree, ix *tree.Index, node *tree.Node, rs *state.RunState) (*Prepared, error) {
	prev := contextfiles.Previous{
		Iteration: rs.Iteration,
		Node:      rs.LastNode,
		Status:    rs.LastStatus,
		Summary:   rs.LastSummary,
		Guard:     rs.LastGuard,
	}
	if rs.Iteration > 0 {
		prev.RunDir = p.RunDir(rs.Iteration)
	}
	files, err := contextfiles.Render(node, prev, failureLimit)
	if err != nil {
		return nil, err
	}
	// The context files are re-fed into the prompt and read by the agent:
	// they are scrubbed too, not only the prompt.
	fileRedactions := map[string]int{}
	for _, f := range []*string{&files.Goal, &files.History, &files.Failure} {
		var counts map[string]int
		*f, counts = scrubber.Redact(*f)
		for rule, n := range counts {
			fileRedactions[rule] += n
		}
	}
	assumptions, err := readNotes(p.Assumptions())
	if err != nil {
		return nil, err
	}
	questions, err := readNotes(p.Questions())
	if err != nil {
		return nil, err
	}
	pack, err := prompt.Build(prompt.Input{
		Goal:               files.Goal,
		History:            files.History,
		Failure:            files.Failure,
		Tree:               t,
		Index:              ix,
		Selected:           node,
		SelectedPath:       ix.Path(node.ID),
		DefaultMaxAttempts: cfg.Loop.MaxAttempts,
		Assumptions:        assumptions,
		Questions:          questions,
		Budget:             int(cfg.Prompt.Budget),
		Redactor:           scrubber,
	})
	if err != nil {
		return nil, err
	}
	for rule, n := range fileRedactions {
		pack.Redactions[rule] += n
	}
	return &Prepared{Files: files, Pack: pack}, nil
}

// scrubberFor returns the scrubber for cfg, reusing the one built for the
// previous iteration when the settings it is built from are the same:
// compiling the rules is a good part of an iteration's own work.
func (r *Runner) scrubberFor(cfg *config.Config) (*scrub.Scrubber, error) {
	key := fmt.Sprintf("%v\x00%q\x00%q\x00%q", cfg.Scrub.Enabled, cfg.Scrub.Rules, cfg.Scrub.Allow, cfg.Executor.Env)
	if r.cache.scrubber != nil && r.cache.scrubberKey == key {
		return r.cache.scrubber, nil
	}
	s, err := newScrubber(cfg)
	if err != nil {
		return nil, err
	}
	r.cache.scrubber, r.cache.scrubberKey = s, key
	return s, nil
}

// newScrubber builds the secret scrubber from [scrub] and the
// environment: the runner's own and the variables given to the agent.
func newScrubber(cfg *config.Config) (*scrub.Scrubber, error) {
	environ := os.Environ()
	for k, v := range cfg.Executor.Env {
		environ = append(environ, k+"="+v)
	}
	extra := make([]scrub.UserRule, 0, len(cfg.Scrub.Rules))
	for _, r := range cfg.Scrub.Rules {
		extra = append(extra, scrub.UserRule{Name: r.Name, Regex: r.Regex})
	}
	s, err := scrub.New(scrub.Options{Enabled: cfg.Scrub.Enabled, Extra: extra, Allow: cfg.Scrub.Allow, Environ: environ})
	if err != nil {
		return nil, fmt.Errorf("config [scrub]: %w", err)
	}
	return s, nil
}

// readNotes reads a notes file for the prompt: its most recent part,
// within notesLimit (a person's oversized file is read from its end too);
// a missing file is empty.
//
// A notes file an agent replaced with a symbolic link or a named pipe is
// read as empty rather than stopping the run: the next note recorded
// replaces it with a real file (fsutil never appends through either).
func readNotes(path string) (string, error) {
	text, err := state.ReadNotesTail(path, notesLimit)
	if errors.Is(err, fsutil.ErrSymlink) || errors.Is(err, fsutil.ErrNotRegular) {
		return "", nil
	}
	return text, err
}

// iterate runs one iteration on the selected node, from the durable
// in-flight marker to the recorded outcome.
func (r *Runner) iterate(ctx context.Context, t *tree.Tree, ix *tree.Index, sel tree.Selection) error {
	node := sel.Node
	n := max(r.rs.NextIteration(), r.keptFloor+1)
	for {
		if _, err := os.Stat(r.p.RunDir(n)); errors.Is(err, os.ErrNotExist) {
			break
		}
		n++ // never reuse a run folder, even one the state does not know
	}
	if err := r.rotateJournal(); err != nil {
		return err
	}
	start := time.Now().UTC()
	r.rs.InFlight = &state.InFlight{Iteration: n, Node: node.ID, Phase: state.PhaseStarted, RunnerPID: os.Getpid(), StartedAt: start}
	r.stateDirty = true
	// Durable before the agent runs: the journal's started record. From
	// here on, a crash makes this iteration an interrupted attempt and its
	// number is never reused. One append and one fsync, which also makes
	// the previous iteration's recorded line durable; run_state.json gets
	// the in-flight marker while the agent works (whileAgentRuns), and a
	// runner that starts after a crash reads the journal for a started
	// iteration the run state does not know of (resumeFromJournal). The
	// prompt is built while the fsync is under way; nothing of this
	// iteration outside context/ is written before it is done.
	startRec := state.Record{Time: start, Iteration: n, Node: node.ID, Event: state.EventStarted, Attempts: node.Attempts, RunnerPID: os.Getpid()}
	startSaved := make(chan error, 1)
	go func() { startSaved <- state.AppendJournal(r.p.Journal(), startRec) }()
	prep, err := r.prepareIteration(t, ix, node)
	if startErr := <-startSaved; startErr != nil {
		// Nothing is in flight: the started record did not reach the disk.
		r.rs.InFlight = nil
		return errors.Join(startErr, err)
	}
	r.journalDirty = false

	limit := node.AttemptLimit(r.cfg.Loop.MaxAttempts)
	runDir := r.p.RunDir(n)
	meta := &state.Meta{
		Iteration: n, Node: node.ID, NodePath: ix.Path(node.ID),
		Attempt: node.Attempts + 1, MaxAttempts: limit, Attempts: node.Attempts,
		Phase: state.PhaseStarted, StartedAt: start,
	}
	promptFile := filepath.Join(runDir, "prompt.md")
	if err == nil {
		err = writeRunFolder(runDir, n, node.ID, prep.Pack)
	}
	if err != nil {
		// A failure of the runner's own, before any agent ran: no attempt.
		return r.failedBeforeAgent(meta, err)
	}
	// meta.json is first written when the agent is done (or waits out a
	// rate limit): until then the in-flight marker says everything a
	// resuming runner needs, and a runner that finds no meta.json rebuilds
	// it from the marker and the tree (see resume).
	meta.Prompt = state.PromptMeta{Bytes: len(prep.Pack.Text), Budget: prep.Pack.Budget, Dropped: dropped(prep.Pack)}

	req := executor.Request{
		Root:       r.p.Root,
		RunnerDir:  r.p.Dir,
		RunDir:     runDir,
		Iteration:  n,
		NodeID:     node.ID,
		Prompt:     []byte(prep.Pack.Text),
		PromptFile: promptFile,
		SchemaFile: r.p.Schema(),
		OnStart: func(pid, pgid int) {
			r.rs.InFlight.AgentPGID = pgid
			if r.cache.agentIteration != n {
				// The first agent run of the iteration: whatever it and
				// later runs leave behind has a later process id.
				r.cache.agentIteration, r.cache.agentMark = n, proc.MarkPIDs(pid)
			}
			r.whileAgentRuns(n)
		},
	}
	// A run that hits a usage or rate limit spends no attempt: the agent
	// runs again on the same node after a wait, in the same run folder.
	opts := r.executorOptions()
	var res *executor.Result
	var waited time.Duration
	for retry := 0; ; retry++ {
		req.Retry = retry
		var err error
		res, err = executor.Run(ctx, opts, req)
		// What the agent removed is put back before anything is written.
		r.background.Wait()
		if ierr := r.checkIntact(n); ierr != nil {
			return ierr
		}
		if serr := r.agentStarted(); serr != nil {
			return serr
		}
		if err != nil {
			return r.abort(meta, err)
		}
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
		}
		if res.Class != executor.ClassRateLimited || ctx.Err() != nil {
			break
		}
		if done, err := r.waitOutRateLimit(ctx, meta, res, retry, &waited); done {
			return err
		}
	}
	// The usage reaches run_state.json with the next save of the
	// in-flight marker, so it is counted exactly once.
	if meta.Usage != nil {
		r.rs.Usage.Add(*meta.Usage)
	}
	return r.agentFinished(ctx, meta, res)
}

// agentFinished carries an iteration on from its agent's last run, res,
// already in meta.Agent (its usage counted by the caller): the message
// saved, the guards run when the agent says done, the outcome recorded.
func (r *Runner) agentFinished(ctx context.Context, meta *state.Meta, res *executor.Result) error {
	runDir := r.p.RunDir(meta.Iteration)
	if len(res.PermissionDenials) > 0 {
		var tools []string
		for _, d := range res.PermissionDenials {
			tools = append(tools, d.Tool)
		}
		r.log.Warn("the agent was refused tool calls (permission_denials in meta.json); check executor.args",
			"iteration", meta.Iteration, "node", meta.Node, "refused", strings.Join(tools, ", "))
	}
	// The failure count reaches run_state.json with the next save of the
	// in-flight marker, so it is counted exactly once.
	r.countAgentFailure(res.Class, res.AgentFailed)
	if ctx.Err() != nil {
		return r.recordInterrupted(meta, "the run was interrupted by a signal while the agent was working")
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
		if err := writeJSONFile(filepath.Join(runDir, "output.json"), res.Message, fsutil.NotSynced); err != nil {
			return err
		}
		if res.Class == executor.ClassOK {
			meta.AgentStatus = res.Message.Status
		}
		meta.Summary = res.Message.Summary
	}
	meta.Phase = state.PhaseAgentDone
	if r.guardsWillRun(meta) {
		// The guards may run for minutes: the agent's results are made
		// durable first, so that a crash meanwhile reruns the guards only.
		if err := r.advance(meta, state.EventAgentDone); err != nil {
			return err
		}
	} else {
		// Nothing runs before the outcome is recorded, and recording
		// starts with a durable meta.json holding the agent's results,
		// which a resuming runner reads ahead of the in-flight marker:
		// moving the marker first would only cost two more durable writes.
		if err := r.journalLazy(r.phaseRecord(meta, state.EventAgentDone)); err != nil {
			return err
		}
	}
	if err := r.finish(ctx, meta); err != nil {
		return err
	}
	return r.tooManyFailures(meta, res)
}

// writeRunFolder creates iteration n's run folder with the prompt sent
// and its provenance: records for people, atomic, not fsynced (see
// BENCHMARKS.md, "Durable writes").
func writeRunFolder(runDir string, n int, node string, pack *prompt.Pack) error {
	if err := fsutil.MkdirAll(runDir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", runDir, err)
	}
	if err := fsutil.ReplaceFile(filepath.Join(runDir, "prompt.md"), []byte(pack.Text), 0o644, fsutil.NotSynced); err != nil {
		return err
	}
	return writeProvenance(runDir, n, node, pack)
}

// failedBeforeAgent ends an iteration whose preparation failed in the
// runner's own I/O (a full disk, a read-only file) before its agent
// started: set aside with no attempt spent, as far as the failure lets
// the runner write that. When it cannot, the iteration stays in flight,
// and the next runner finds that no agent started (resumeStarted).
func (r *Runner) failedBeforeAgent(meta *state.Meta, cause error) error {
	cause = fmt.Errorf("prepare iteration %d: %w", meta.Iteration, cause)
	if err := r.setAside(meta, "the runner could not prepare the iteration: "+cause.Error(), cause); err != nil {
		r.log.Warn("could not record that the iteration was set aside; the next run does", "iteration", meta.Iteration, "err", err)
	}
	return cause
}

// prepareIteration builds what the agent of an iteration on node is
// given: the context files, written to context/, the prompt pack, and
// state/output.schema.json.
func (r *Runner) prepareIteration(t *tree.Tree, ix *tree.Index, node *tree.Node) (*Prepared, error) {
	scrubber, err := r.scrubberFor(r.cfg)
	if err != nil {
		return nil, err
	}
	prep, err := prepare(r.p, r.cfg, scrubber, t, ix, node, r.rs)
	if err != nil {
		return nil, err
	}
	if err := contextfiles.Write(r.p.ContextDir(), prep.Files); err != nil {
		return nil, err
	}
	if err := r.ensureSchema(); err != nil {
		return nil, err
	}
	return prep, nil
}

// guardsWillRun reports whether the guards run for an iteration whose
// agent is done: only when it says done and guards are configured.
func (r *Runner) guardsWillRun(meta *state.Meta) bool {
	return meta.AgentStatus == "done" && len(r.cfg.Guards) > 0
}

// agentMeta is meta.json's record of an agent run, keeping the rate
// limits earlier runs of the iteration hit.
func agentMeta(res *executor.Result, limits []state.RateLimitMeta) *state.AgentMeta {
	return &state.AgentMeta{
		Argv: res.Argv, ExitCode: res.ExitCode, Class: res.Class,
		DurationMS: res.Duration.Milliseconds(), Error: res.Error,
		MessageSource: res.MessageSource, MessageError: res.MessageError, LogTail: res.LogTail,
		Evidence: res.Evidence, Failed: res.AgentFailed, PermissionDenials: res.PermissionDenials, RateLimits: limits,
		Recovered: res.Recovered,
	}
}

// budgetExceeded returns the end of the run when the usage summed in
// run_state.json has reached loop.max_cost_usd or loop.max_tokens, so
// that no iteration starts past them; nil otherwise.
func (r *Runner) budgetExceeded() *Result {
	l, u := r.cfg.Loop, r.rs.Usage
	var msg string
	switch {
	case l.MaxCostUSD > 0 && u.CostUSD >= l.MaxCostUSD:
		msg = fmt.Sprintf("reached loop.max_cost_usd ($%.2f): the agents have cost $%.4f so far", l.MaxCostUSD, u.CostUSD)
	case l.MaxTokens > 0 && u.Tokens() >= l.MaxTokens:
		msg = fmt.Sprintf("reached loop.max_tokens (%d): the agents have used %d tokens so far", l.MaxTokens, u.Tokens())
	default:
		return nil
	}
	return &Result{Reason: MaxIterations, Iterations: r.count,
		Message: msg + " (the total in state/run_state.json, kept across runs) with work left; raise the limit in .runner/config.toml to go on"}
}

// abort ends an iteration whose agent could not be started (a missing
// program, a bad working directory): a configuration problem, not an
// attempt. The node's attempts stay as they are and nothing is left in
// flight; the run folder keeps the prompt and a meta.json saying why.
func (r *Runner) abort(meta *state.Meta, cause error) error {
	if err := r.setAside(meta, "the agent could not be started: "+cause.Error(), cause); err != nil {
		return errors.Join(cause, err)
	}
	return cause
}

// setAside ends an iteration without an outcome and without spending an
// attempt: meta.json says why (note) with phase aborted, nothing is left
// in flight, the journal gets an aborted record. The usage of the agent
// runs it had is added to the run state. It returns only a failure to
// write these.
func (r *Runner) setAside(meta *state.Meta, note string, cause error) error {
	meta.Phase = state.PhaseAborted
	meta.Note = note
	if err := state.SaveMeta(r.p.RunDir(meta.Iteration), meta); err != nil {
		return err
	}
	r.rs.InFlight = nil
	if meta.Usage != nil {
		r.rs.Usage.Add(*meta.Usage)
	}
	if err := r.saveState(fsutil.Durable); err != nil {
		return err
	}
	return r.journal(state.Record{Iteration: meta.Iteration, Node: meta.Node, Event: state.EventAborted, Error: cause.Error(), Usage: meta.Usage})
}

// finish runs the guards of an iteration whose agent is done (unless
// that already happened) and records the outcome.
func (r *Runner) finish(ctx context.Context, meta *state.Meta) error {
	if meta.Phase == state.PhaseAgentDone {
		meta.Guard = state.GuardSkipped
		if r.guardsWillRun(meta) {
			runDir := r.p.RunDir(meta.Iteration)
			// The guards carry the iteration in their environment, as the
			// agent does, so that what they leave behind is found and
			// stopped like the agent's (killLeftoverAgent, stopEscapedAgent).
			env := []string{"RUNNER_DIR=" + r.p.Dir, "RUNNER_ITERATION=" + strconv.Itoa(meta.Iteration), "RUNNER_NODE_ID=" + meta.Node}
			r.syncKeep(r.rs.Iteration)
			results, verdict, err := guard.Run(ctx, r.p.Root, guardSpecs(r.cfg), filepath.Join(runDir, "guard.log"),
				filepath.Join(runDir, "failure.log"), r.cfg.Executor.KillGrace.Duration, env)
			if ierr := r.checkIntact(meta.Iteration); ierr != nil {
				return ierr
			}
			if err != nil {
				return err
			}
			if ctx.Err() != nil {
				// The agent's work is recorded; the guards run again on resume.
				return nil
			}
			meta.Guards = meta.Guards[:0]
			for _, g := range results {
				meta.Guards = append(meta.Guards, state.GuardMeta{Name: g.Name, ExitCode: g.ExitCode, DurationMS: g.DurationMS, Status: g.Status, Error: g.Error})
			}
			meta.Guard = verdict
			meta.Phase = state.PhaseGuardsDone
			if err := r.advance(meta, state.EventGuardsDone); err != nil {
				return err
			}
			return r.record(meta)
		}
		if meta.AgentStatus == "done" {
			meta.Guard = state.GuardPass
			meta.Note = "no guards configured: done is trusted"
		}
		// No guard ran: as after the agent (see iterate), recording makes
		// the results durable before it changes anything.
		meta.Phase = state.PhaseGuardsDone
		if err := r.journalLazy(r.phaseRecord(meta, state.EventGuardsDone)); err != nil {
			return err
		}
	}
	return r.record(meta)
}

// advance moves the iteration to meta.Phase: meta.json, then the
// in-flight marker, each durably (guards are about to run, or have run),
// then the journal line, which the journal's next fsync makes durable.
func (r *Runner) advance(meta *state.Meta, event string) error {
	if err := r.commitPhase(meta); err != nil {
		return err
	}
	return r.journalLazy(r.phaseRecord(meta, event))
}

// phaseRecord is the journal record of an iteration reaching a phase.
func (r *Runner) phaseRecord(meta *state.Meta, event string) state.Record {
	rec := state.Record{Iteration: meta.Iteration, Node: meta.Node, Event: event, Phase: meta.Phase, AgentStatus: meta.AgentStatus, Guard: meta.Guard}
	if meta.Agent != nil {
		rec.AgentClass = meta.Agent.Class
		rec.Error = meta.Agent.Error
		rec.Evidence = meta.Agent.Evidence
	}
	if event == state.EventAgentDone {
		rec.Usage = meta.Usage
	}
	return rec
}

// saveMetaDurably writes meta.json durably, and the first time for an
// iteration also the run folder's own entry in runs/, which was created
// without an fsync.
func (r *Runner) saveMetaDurably(meta *state.Meta) error {
	if r.cache.syncedRun != meta.Iteration {
		if err := fsutil.SyncDir(r.p.RunsDir()); err != nil {
			return err
		}
		r.cache.syncedRun = meta.Iteration
	}
	return state.SaveMeta(r.p.RunDir(meta.Iteration), meta)
}

// journal appends a record durably, which also makes durable every
// record journalLazy appended before it.
func (r *Runner) journal(rec state.Record) error {
	if err := state.AppendJournal(r.p.Journal(), rec); err != nil {
		return err
	}
	r.journalDirty = false
	return nil
}

// journalLazy appends a record without an fsync: it reaches the disk with
// the next durable record (the next iteration's started record),
// flushState, or the kernel's writeback.
func (r *Runner) journalLazy(rec state.Record) error {
	if err := state.AppendJournalAs(r.p.Journal(), rec, fsutil.NotSynced); err != nil {
		return err
	}
	r.journalDirty = true
	return nil
}

// ensureSchema keeps state/output.schema.json equal to the schema the
// runner expects, writing it only when it differs.
func (r *Runner) ensureSchema() error {
	if cur, err := fsutil.ReadFile(r.p.Schema()); err == nil && string(cur) == executor.OutputSchema {
		return nil
	}
	return fsutil.WriteFileAtomic(r.p.Schema(), []byte(executor.OutputSchema), 0o644)
}

// executorOptions returns the options of the executor for the current
// config, compiling the rate limit patterns only when they changed.
func (r *Runner) executorOptions() executor.Options {
	key := strings.Join(r.cfg.Executor.RateLimitPatterns, "\x00")
	if r.cache.patterns == nil || r.cache.patternsKey != key {
		r.cache.patterns, r.cache.patternsKey = compilePatterns(r.cfg.Executor.RateLimitPatterns), key
	}
	return executorOptionsWith(r.cfg, r.cache.patterns)
}

// compilePatterns compiles rate limit patterns; config validation already
// refused any that does not compile.
func compilePatterns(list []string) []*regexp.Regexp {
	patterns := make([]*regexp.Regexp, 0, len(list))
	for _, p := range list {
		if re, err := regexp.Compile(p); err == nil {
			patterns = append(patterns, re)
		}
	}
	return patterns
}

func executorOptionsWith(cfg *config.Config, patterns []*regexp.Regexp) executor.Options {
	e := cfg.Executor
	return executor.Options{
		Preset: e.Preset, Bin: e.Bin, Args: e.Args, Command: e.Command,
		Timeout: e.Timeout.Duration, IdleTimeout: e.IdleTimeout.Duration, Grace: e.KillGrace.Duration,
		OutputLimit: int64(e.OutputLimit), Env: e.Env, EnvDrop: e.EnvDrop,
		RateLimitPatterns: patterns,
		Prices:            executor.Prices{Input: e.Prices.Input, CachedInput: e.Prices.CachedInput, Output: e.Prices.Output},
		Now:               rateLimitClock,
	}
}

func guardSpecs(cfg *config.Config) []guard.Spec {
	specs := make([]guard.Spec, 0, len(cfg.Guards))
	for _, g := range cfg.Guards {
		specs = append(specs, guard.Spec{Name: g.Name, Run: g.Run, Timeout: g.Timeout.Duration, OutputLimit: int64(g.OutputLimit)})
	}
	return specs
}

func dropped(p *prompt.Pack) []string {
	var out []string
	for _, s := range p.Sections {
		if s.State == "dropped" || s.State == "truncated" {
			out = append(out, s.Key+" ("+s.State+")")
		}
	}
	return out
}

// Provenance is runs/NNNNNN/context.json: what went into the prompt.
type Provenance struct {
	InjectionID string                 `json:"injection_id"`
	Timestamp   time.Time              `json:"timestamp"`
	Iteration   int                    `json:"iteration"`
	Node        string                 `json:"node"`
	Budget      int                    `json:"budget"`
	Sections    []prompt.SectionReport `json:"sections"`
	TotalBytes  int                    `json:"total_bytes"`
	Redactions  map[string]int         `json:"redactions"`
}

func writeProvenance(runDir string, n int, node string, pack *prompt.Pack) error {
	now := time.Now().UTC()
	red := pack.Redactions
	if red == nil {
		red = map[string]int{}
	}
	return writeJSONFile(filepath.Join(runDir, "context.json"), Provenance{
		InjectionID: injectionID(now), Timestamp: now, Iteration: n, Node: node,
		Budget: pack.Budget, Sections: pack.Sections, TotalBytes: len(pack.Text), Redactions: red,
	}, fsutil.NotSynced)
}

// injectionID is INJ-YYYYMMDD-HHMMSS-xxxxxx with six random hex digits.
func injectionID(t time.Time) string {
	var b [3]byte
	rand.Read(b[:])
	return "INJ-" + t.Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

func writeJSONFile(path string, v any, d fsutil.Durability) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return fsutil.ReplaceFile(path, append(data, '\n'), 0o644, d)
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		cut := max
		for cut > 0 && (s[cut]&0xC0) == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// whileAgentRuns starts, in the background, the writes of iteration n
// that may wait until its agent is done, so that the time they take is
// spent while the agent works rather than after it. agentStarted waits
// for them; it is called before anything else touches the run state.
//
//   - run_state.json, durably, with the in-flight marker and the agent's
//     process group, so that a runner started after a crash of this
//     process can kill an agent this one leaves behind (on Linux it is
//     also found by its environment). It also replaces the previous
//     iteration's marker, which record clears in memory only. It is
//     written from a copy of the run state taken now. Until it is on
//     disk, the journal's started record is the iteration's marker.
//   - the fsync of runs/, which makes the new run folder's entry durable
//     before meta.json is first made durable in it.
func (r *Runner) whileAgentRuns(n int) {
	snap := *r.rs
	inFlight := *r.rs.InFlight
	snap.InFlight = &inFlight
	if r.cache.syncedRun != n {
		r.background.Go(func() {
			if err := fsutil.SyncDir(r.p.RunsDir()); err != nil {
				r.log.Error("make the run folder durable", "err", err)
			} else {
				r.backgroundSynced = n
			}
		})
	}
	r.stateOnDisk = true
	r.background.Go(func() {
		r.backgroundErr = state.SaveRunState(r.p.RunState(), &snap)
		// The agent may remove what the keep does not hold yet.
		r.syncKeep(snap.Iteration)
	})
}

// agentStarted waits for the writes whileAgentRuns started. When the run
// state could not be written, it tries once more and otherwise fails:
// the iteration must not be recorded while run_state.json still names
// an earlier one in flight, which a runner resuming after a crash would
// record again over this one's outcome.
func (r *Runner) agentStarted() error {
	r.background.Wait()
	if r.backgroundSynced != 0 {
		r.cache.syncedRun, r.backgroundSynced = r.backgroundSynced, 0
	}
	if r.backgroundErr == nil {
		return nil
	}
	r.log.Warn("could not record the iteration in flight in the run state; trying again", "err", r.backgroundErr)
	r.backgroundErr = nil
	return r.saveState(fsutil.Durable)
}

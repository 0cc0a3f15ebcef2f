// Package plan is `runner plan` (SPEC §16): one run of the configured
// agent that turns documents (a PRD, a spec, an issue) into a task tree,
// or decomposes one task of the tree, without letting the agent write
// tree.json. The agent gets a fixed planning contract, the documents
// (scrubbed, within the prompt budget) and the current tree's outline,
// and answers with the final message of SPEC §5: status decomposed, and
// children that may nest. The runner validates the answer as it
// validates tree.json, and writes it, atomically, only when that loses
// nothing: a tree with progress is replaced only with Force, and its
// copy is kept beside it; a decomposition only adds tasks.
//
// A planning run is recorded like an iteration, outside the loop's
// phases (ledger.Planned): it holds the lock, so it never runs beside
// `runner run`, takes the next iteration number and its run folder
// (prompt.md, context.json, executor.log, output.json, meta.json, and
// plan.json with the tree it proposes), counts its usage in the run
// state, and appends a plan record to the journal.
package plan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/charmbracelet/log"

	"github.com/runner-cli/runner/internal/config"
	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/ledger"
	"github.com/runner-cli/runner/internal/prompt"
	"github.com/runner-cli/runner/internal/ratelimit"
	"github.com/runner-cli/runner/internal/sandbox"
	"github.com/runner-cli/runner/internal/spend"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// Files of a planning run's folder, besides an iteration's.
const (
	SchemaFileName   = "plan.schema.json" // Schema, the agent's {schema_file}
	ProposalFileName = "plan.json"        // the tree the plan makes, as tree.json would hold it
)

// Options configure one `runner plan`.
type Options struct {
	Paths     state.Paths
	Documents []Document
	// Node is the task to decompose; "" plans the whole tree.
	Node string
	// Force replaces a tree that has progress; its copy is kept.
	Force bool
	// DryRun runs the agent and checks its plan, and writes nothing but
	// the run folder.
	DryRun bool
	// Progress gets a line when the agent starts and for each wait.
	Progress io.Writer
	Log      *log.Logger
	// Room is the room of a program working in work with its temporary
	// directory tmp under a config (room.For): the planning agent's
	// is an iteration's. nil: the plan cannot confine its agent, and
	// runs it as sandbox.mode = "off" would.
	Room func(cfg *config.Config, work, tmp string) *sandbox.Room
}

// Result is what a planning run made of the agent's answer.
type Result struct {
	Iteration int
	Node      string            // the task decomposed; "" for a plan of the whole tree
	Outcome   string            // one of the state.OutcomePlan values
	Message   *executor.Message // the agent's answer; nil when it gave none
	// Tree is the tree the plan makes (valid), and Planned in it the
	// root of a whole plan or the task decomposed; nil when there is no
	// valid plan. Tasks counts the tasks the plan adds.
	Tree    *tree.Tree
	Planned *tree.Node
	Tasks   int
	// Proposal is the file holding Tree in the run folder; Backup the
	// copy of the tree.json the plan replaced ("" when none).
	Proposal, Backup string
}

// Written reports whether the plan was written to tree.json.
func (r *Result) Written() bool { return r.Outcome == state.OutcomePlanWritten }

// Run plans. Problems found before the agent runs (bad input, the lock
// held, an unfinished iteration, a tree with progress without Force,
// documents over the budget) are returned as an error with a nil
// Result, and nothing is recorded. Once the agent ran, the Result says
// what came of it and the run is recorded; the error then says why the
// plan was not written (an *InvalidError for a plan that does not
// validate), or that ctx ended.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Log == nil {
		o.Log = log.New(io.Discard)
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	p := o.Paths
	l, err := ledger.Open(p, o.Log)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	cfg, err := config.Load(p.Config())
	if err != nil {
		return nil, err
	}
	cur, err := readCurrent(p)
	if err != nil {
		return nil, err
	}
	if err := l.Load(); err != nil {
		return nil, err
	}
	r := &run{o: o, p: p, l: l, cfg: cfg, cur: cur}
	if err := r.check(); err != nil {
		return nil, err
	}
	if err := r.begin(); err != nil {
		return nil, err
	}
	res, err := r.agent(ctx)
	return r.finish(ctx, res, err)
}

// current is tree.json as it was before the agent ran.
type current struct {
	data []byte     // nil when there is no tree.json
	t    *tree.Tree // nil when there is no tree.json
	ix   *tree.Index
}

// readCurrent reads and validates tree.json; a missing one is no tree.
// A tree that does not validate is never replaced (SPEC §2).
func readCurrent(p state.Paths) (*current, error) {
	data, err := fsutil.ReadLimited(p.Tree(), tree.MaxFileSize, false)
	if errors.Is(err, os.ErrNotExist) {
		return &current{}, nil
	}
	if err != nil {
		return nil, err
	}
	t, err := tree.Parse(p.Rel(p.Tree()), data)
	if err != nil {
		return nil, fmt.Errorf("%w\nplan: fix %s first, or move it away to plan a new tree", err, p.Rel(p.Tree()))
	}
	return &current{data: data, t: t, ix: tree.NewIndex(t)}, nil
}

// run is one planning run under way.
type run struct {
	o   Options
	p   state.Paths
	l   *ledger.Ledger
	cfg *config.Config
	cur *current

	node   *tree.Node // the task to decompose; nil for a whole plan
	n      int
	runDir string
	pack   *prompt.Pack
	meta   *state.Meta
}

// check refuses what the plan could not write: an iteration a stopped
// runner left unfinished (its record would land on the new tree), a task
// that cannot be decomposed, a tree with progress without Force.
func (r *run) check() error {
	if in, err := r.l.Left(); err != nil {
		return err
	} else if in != nil {
		return fmt.Errorf("plan: iteration %d on %s was left unfinished by a runner that stopped; the next `runner run` records it, "+
			"and that record would land on the planned tree. Let a run record it first (`runner run --once` records it, then runs at most one more iteration)",
			in.Iteration, in.Node)
	}
	if r.o.Node != "" {
		if r.cur.t == nil {
			return fmt.Errorf("plan --node %s: there is no %s to decompose a task of; plan the whole tree first", r.o.Node, r.p.Rel(r.p.Tree()))
		}
		n, err := Open(r.cur.t, r.cur.ix, r.o.Node)
		if err != nil {
			return fmt.Errorf("plan --node %s: %w", r.o.Node, err)
		}
		r.node = n
		return nil
	}
	if len(r.o.Documents) == 0 {
		return errors.New("plan: name the documents to plan from (files in the repository, or - to read one from stdin)")
	}
	journal, err := state.ReadJournal(r.p.Journal())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("plan: read the journal to know the tree's progress: %w", err)
	}
	if done := LedgerProgress(r.cur.t, r.l.Owned(), journal); len(done) > 0 && !r.o.Force && !r.o.DryRun {
		return fmt.Errorf("plan: %s has progress (%s), which a new plan would replace. Plan again with --force to replace it "+
			"(the current tree is kept beside it), or decompose one task with --node ID", r.p.Rel(r.p.Tree()), summarize(done, 5))
	}
	return nil
}

// begin builds the prompt and the run folder: prompt.md, context.json,
// the schema, and a first meta.json.
func (r *run) begin() error {
	scrubber, err := r.cfg.Scrubber()
	if err != nil {
		return err
	}
	r.pack, err = BuildPrompt(PromptInput{Documents: r.o.Documents, Tree: shownTree(r.cur, r.node), Index: r.cur.ix, Node: r.node,
		DefaultMaxAttempts: r.cfg.Loop.MaxAttempts, Budget: int(r.cfg.Prompt.Budget), Redactor: scrubber})
	if err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	r.n = r.l.NextIteration()
	r.runDir = r.p.RunDir(r.n)
	if err := prompt.WriteRunFolder(r.runDir, r.n, r.o.Node, r.pack); err != nil {
		return err
	}
	if err := fsutil.ReplaceFile(filepath.Join(r.runDir, SchemaFileName), []byte(Schema), 0o644, fsutil.NotSynced); err != nil {
		return err
	}
	r.meta = r.newMeta()
	return r.l.SavePlan(r.meta)
}

func (r *run) newMeta() *state.Meta {
	pm := &state.PlanMeta{Node: r.o.Node, Force: r.o.Force, DryRun: r.o.DryRun}
	for _, d := range r.o.Documents {
		pm.Documents = append(pm.Documents, state.PlanDocument{Name: d.Name, Bytes: len(d.Text)})
	}
	// The usage of the plan's agent is booked to its executor by name.
	m := &state.Meta{Iteration: r.n, Node: r.o.Node, NodePath: "(plan)", Phase: state.PhaseStarted, StartedAt: time.Now().UTC(), Plan: pm,
		Prompt: state.PromptMeta{Bytes: len(r.pack.Text), Budget: r.pack.Budget}, Executor: r.cfg.Executor.Label()}
	if r.node != nil {
		m.NodePath = r.cur.ix.Path(r.node.ID)
		m.Attempts = r.node.Attempts
	}
	for _, s := range r.pack.Sections {
		if s.State == prompt.StateDropped {
			m.Prompt.Dropped = append(m.Prompt.Dropped, s.Key+" ("+s.State+")")
		}
	}
	return m
}

// agent runs the planning agent, in its room (room.go).
func (r *run) agent(ctx context.Context) (*executor.Result, error) {
	if r.o.Room == nil {
		r.cfg.Sandbox.Mode = config.SandboxOff
	}
	room, err := r.prepareRoom(ctx)
	if err != nil {
		return nil, err
	}
	defer room.done()
	r.meta.Unconfined, r.meta.Openings = room.why, room.openings
	opts := executor.OptionsFrom(r.cfg.Executor, executor.CompilePatterns(r.cfg.Executor.RateLimitPatterns))
	opts.NestedChildren = true
	// The planner's usage counts against the run's caps (SPEC §24).
	opts.Allowance = spend.NewAllowance(spend.RunCaps(r.cfg.Loop), state.Usage{}, r.l.State().Usage)
	if h := opts.Allowance.Exhausted(); h != nil {
		return nil, fmt.Errorf("the agent was not started: %s; raise the cap in %s to plan", h, r.p.Rel(r.p.Config()))
	}
	a := &agentRun{l: r.l, opts: opts, policy: ratelimit.PolicyFrom(r.cfg.Loop), progress: r.o.Progress, now: time.Now,
		req: executor.Request{
			Root: room.work, RunnerDir: r.p.Dir, RunDir: r.runDir, Iteration: r.n, NodeID: r.o.Node,
			Prompt: []byte(r.pack.Text), PromptFile: filepath.Join(r.runDir, "prompt.md"),
			SchemaFile: filepath.Join(r.runDir, SchemaFileName),
			Confine:    room.room, OutputDir: room.tmp,
		}}
	if room.room != nil {
		a.req.Env = []string{"TMPDIR=" + room.tmp}
	}
	fmt.Fprintf(r.o.Progress, "runner: plan: iteration %d, prompt %d of %d bytes; running the agent (%s)\n",
		r.n, len(r.pack.Text), r.pack.Budget, r.cfg.Executor.Preset)
	return a.run(ctx, r.meta)
}

// summarize lists up to n items and says how many more there are.
func summarize(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}

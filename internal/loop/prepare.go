package loop

import (
	"errors"
	"fmt"
	"os"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/preflight"

	contextfiles "github.com/runner-cli/runner/internal/context"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/fsutil"
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
	scrubber, err := cfg.Scrubber()
	if err != nil {
		return nil, err
	}
	return prepare(p, cfg, scrubber, t, ix, node, rs, cfg.Loop.Parallel > 1)
}

// prepare is Prepare with the scrubber built from cfg.
//
// slotted says the iteration works in a parallel slot: the previous
// iteration it is told of is its task's last (RunState.LastOf), not the
// run's.
func prepare(p state.Paths, cfg *config.Config, scrubber *scrub.Scrubber, t *tree.Tree, ix *tree.Index, node *tree.Node, rs *state.RunState, slotted bool) (*Prepared, error) {
	prev := contextfiles.Previous{
		Iteration: rs.Iteration,
		Node:      rs.LastNode,
		Status:    rs.LastStatus,
		Summary:   rs.LastSummary,
		Guard:     rs.LastGuard,
	}
	if last, ok := rs.LastOf[node.ID]; ok && slotted {
		prev = contextfiles.Previous{Iteration: last.Iteration, Node: node.ID, Status: last.Status, Summary: last.Summary, Guard: last.Guard}
	}
	if prev.Iteration > 0 {
		prev.RunDir = p.RunDir(prev.Iteration)
	}
	var ancestors []contextfiles.Ancestor
	for a := ix.Parent(node.ID); a != nil; a = ix.Parent(a.ID) {
		ancestors = append([]contextfiles.Ancestor{{Path: ix.Path(a.ID), Title: a.Title, Goal: a.Goal, Acceptance: a.Acceptance}}, ancestors...)
	}
	all, err := state.LoadAnswers(p)
	if err != nil {
		return nil, err
	}
	var answers []contextfiles.PersonAnswer
	for _, a := range all[node.ID] {
		answers = append(answers, contextfiles.PersonAnswer{Question: a.Question, Answer: a.Answer})
	}
	files, err := contextfiles.RenderWithin(node, ancestors, answers, prev, failureLimit)
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
		Protect:            cfg.Verify.Protect,
		Redactor:           scrubber,
		Judges:             judgesFor(p, cfg, t, node, rs),
		Removes:            tree.RemovesOf(t, node.ID),
	})
	if err != nil {
		return nil, err
	}
	for rule, n := range fileRedactions {
		pack.Redactions[rule] += n
	}
	return &Prepared{Files: files, Pack: pack}, nil
}

// prepareIteration builds what the agent of an iteration on node is
// given: the context files, written to context/, the prompt pack, and
// state/output.schema.json.
func (r *Runner) prepareIteration(t *tree.Tree, ix *tree.Index, node *tree.Node, slotted bool) (*Prepared, error) {
	scrubber, err := r.scrubberFor(r.cfg)
	if err != nil {
		return nil, err
	}
	prep, err := prepare(r.p, r.cfg, scrubber, t, ix, node, r.ledger.State(), slotted)
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

// scrubberFor returns the scrubber for cfg, reusing the one built for the
// previous iteration when the settings it is built from are the same:
// compiling the rules is a good part of an iteration's own work.
func (r *Runner) scrubberFor(cfg *config.Config) (*scrub.Scrubber, error) {
	key := fmt.Sprintf("%v\x00%q\x00%q\x00%q", cfg.Scrub.Enabled, cfg.Scrub.Rules, cfg.Scrub.Allow, cfg.AgentEnv())
	if r.cache.scrubber != nil && r.cache.scrubberKey == key {
		return r.cache.scrubber, nil
	}
	s, err := cfg.Scrubber()
	if err != nil {
		return nil, err
	}
	r.cache.scrubber, r.cache.scrubberKey = s, key
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

// ensureSchema keeps state/output.schema.json equal to the schema the
// runner expects, writing it only when it differs.
func (r *Runner) ensureSchema() error {
	if cur, err := fsutil.ReadFile(r.p.Schema()); err == nil && string(cur) == executor.OutputSchema {
		return nil
	}
	return fsutil.WriteFileAtomic(r.p.Schema(), []byte(executor.OutputSchema), 0o644)
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

// judgesFor are the commands that will judge node's work, as its prompt
// names them: the guards (by regression when the checkpoint has a
// baseline) and the checks (tree.ChecksOf).
func judgesFor(p state.Paths, cfg *config.Config, t *tree.Tree, node *tree.Node, rs *state.RunState) []prompt.Judge {
	// Whether there is a baseline, without reading it (it names every
	// test): with git, the run state's preflight stands for one made
	// with these guards; without, its file is there.
	var byRegression bool
	if rs.Preflight != nil {
		byRegression = rs.Preflight.Guards == preflight.Digest(cfg.Guards)
	} else {
		_, err := os.Stat(p.BaselineFile(state.WorktreeBaseline))
		byRegression = err == nil
	}
	var out []prompt.Judge
	for _, g := range cfg.Guards {
		out = append(out, prompt.Judge{Name: g.Name, Run: g.Run, ByRegression: byRegression && g.Report != ""})
	}
	for _, c := range tree.ChecksOf(t, node.ID) {
		out = append(out, prompt.Judge{Check: true, Node: c.Node, Name: c.Name, Run: c.Run})
	}
	return out
}

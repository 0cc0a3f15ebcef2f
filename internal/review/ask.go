package review

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/iteration"
	"github.com/runner-cli/runner/internal/lane"
	"github.com/runner-cli/runner/internal/prompt"
	"github.com/runner-cli/runner/internal/spend"
	"github.com/runner-cli/runner/internal/state"
)

// answer is what one run of the reviewer gave: a verdict, or why
// it gave none (limited: a usage or rate limit, to be waited out;
// capped: a spend cap it reached, or that was reached before it ran).
type answer struct {
	verdict *executor.Verdict
	why     string
	limited *executor.Result
	capped  *state.CapHit
}

// ask runs the reviewer once on the work held, and puts back
// whatever it changed (which fails that review, verdict or not). The
// error is for the runner's own failures.
func (v *Review) ask(ctx context.Context, meta *state.Meta, hold *heldWork, allowance *spend.Allowance) (answer, error) {
	rc, rv, n, l := v.Config().Review, meta.Review, meta.Iteration, v.Here
	if h := allowance.Exhausted(); h != nil {
		return answer{why: "the reviewer was not started: " + h.String(), capped: h}, nil
	}
	dir := v.dir(n)
	if err := keepEarlierAsk(dir); err != nil {
		return answer{}, err
	}
	pack, err := v.prompt(ctx, meta, hold)
	if err != nil {
		return answer{}, err
	}
	if err := prompt.WriteRunFolder(dir, n, meta.Node, pack); err != nil {
		return answer{}, err
	}
	if cur, err := fsutil.ReadFile(v.Paths.ReviewSchema()); err != nil || string(cur) != executor.ReviewSchema {
		if err := fsutil.WriteFileAtomic(v.Paths.ReviewSchema(), []byte(executor.ReviewSchema), 0o644); err != nil {
			return answer{}, err
		}
	}
	opts := v.Options(rc.Executor)
	opts.Review = true
	opts.Allowance = allowance
	room, tmp, err := l.Room(n)
	if err != nil {
		return answer{}, err
	}
	if tmp != "" {
		tmp = filepath.Join(tmp, "review")
		if err := os.MkdirAll(tmp, 0o700); err != nil {
			return answer{}, err
		}
	}
	req := executor.Request{
		Root: l.Dir(), RunnerDir: v.Paths.Dir, RunDir: dir, Iteration: n, NodeID: meta.Node,
		Prompt: []byte(pack.Text), PromptFile: filepath.Join(dir, "prompt.md"), SchemaFile: v.Paths.ReviewSchema(),
		OnStart: func(_, pgid int) { l.Lock().Inside(func() { v.Ledger.ReviewStarted(n, pgid) }) },
		Confine: room, OutputDir: tmp, Env: lane.TempEnv(tmp),
	}
	fmt.Fprintf(l.Out(), "#%d %-24s review: asking %s\n", n, inert.Line(meta.NodePath), inert.Line(rv.Executor))
	// It may change its judges no more than the agent may (package lane).
	judgesDir := filepath.Join(dir, "judges")
	run, err := iteration.RunProgram(ctx, l.Program(opts, req, judgesDir, "review/judges/"))
	if err != nil {
		return answer{}, err
	}
	forged, err := v.After(n, judgesDir, "review/judges/")
	if err != nil {
		return answer{}, err
	}
	res, runErr, judges := run.Result, run.StartErr, append(run.Tamper, forged...)
	if judges, err = v.Branch.WithMoved(ctx, n, judges); err != nil {
		return answer{}, err
	}
	changed, kept, err := hold.putBack(ctx)
	if err != nil {
		return answer{}, err
	}
	if len(judges) > 0 {
		changed = append(changed, tamperedPaths(judges)...)
		if kept == "" {
			kept = "runs/" + filepath.Base(v.Paths.RunDir(n)) + "/review/judges/"
		}
	}
	rv.Asked++
	if res != nil && res.Usage != nil {
		if rv.Usage == nil {
			rv.Usage = &state.Usage{}
		}
		rv.Usage.Add(*res.Usage)
	}
	if len(changed) > 0 {
		rv.Kept = kept
		return answer{why: changedWhy(changed, kept)}, nil
	}
	return answerOf(res, runErr)
}

// answerOf is what a run of the reviewer that changed nothing gave: res,
// or runErr when it could not run.
func answerOf(res *executor.Result, runErr error) (answer, error) {
	var se *executor.StartError
	switch {
	case errors.As(runErr, &se):
		return answer{why: "the reviewer could not be started: " + runErr.Error()}, nil
	case runErr != nil:
		return answer{}, runErr
	case res.Class == executor.ClassOK && res.Verdict != nil:
		return answer{verdict: res.Verdict}, nil
	case res.Class == executor.ClassCostCap:
		return answer{why: res.Error, capped: res.CostCap}, nil
	case res.Class == executor.ClassRateLimited:
		return answer{why: res.Error, limited: res}, nil
	case res.Error != "":
		return answer{why: res.Error}, nil
	}
	return answer{why: "the reviewer gave no valid verdict: " + res.MessageError}, nil
}

// keepEarlierAsk moves what an earlier run of the reviewer left in dir
// (its log, events and output) into dir/ask-<k>/, so that each run's
// files stay apart.
func keepEarlierAsk(dir string) error {
	if _, err := os.Lstat(filepath.Join(dir, executor.LogFileName)); err != nil {
		return nil
	}
	k := 1
	for ; ; k++ {
		if _, err := os.Lstat(filepath.Join(dir, fmt.Sprintf("ask-%d", k))); err != nil {
			break
		}
	}
	to := filepath.Join(dir, fmt.Sprintf("ask-%d", k))
	if err := fsutil.MkdirAll(to, 0o755); err != nil {
		return err
	}
	for _, name := range []string{"prompt.md", "context.json", executor.LogFileName, executor.EventsFileName, executor.OutputFileName, executor.ExitFileName} {
		if err := fsutil.Rename(filepath.Join(dir, name), filepath.Join(to, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// prompt builds the reviewer's prompt: the task as tree.json has
// it now, the agent's summary, the guard results and the changes.
func (v *Review) prompt(ctx context.Context, meta *state.Meta, hold *heldWork) (*prompt.Pack, error) {
	in := Input{Path: meta.NodePath, ID: meta.Node, Summary: meta.Summary, Budget: int(v.Config().Prompt.Budget)}
	if node := v.Task(meta.Node); node != nil {
		in.Title, in.Goal, in.Acceptance = node.Title, node.Goal, node.Acceptance
	}
	for _, g := range meta.Guards {
		in.Guards = append(in.Guards, fmt.Sprintf("%s: %s, exit %d, %.1fs", g.Name, g.Status, g.ExitCode, float64(g.DurationMS)/1000))
	}
	var err error
	if in.Changes, in.ChangesNote, err = hold.changes(ctx, meta.StartedAt, in.Budget); err != nil {
		return nil, fmt.Errorf("the changes for the review: %w", err)
	}
	scrubber, err := v.Scrubber()
	if err != nil {
		return nil, err
	}
	in.Redactor = scrubber
	return Build(in)
}

// changedWhy says what a reviewer changed in the work and where it is
// kept.
func changedWhy(changed []string, kept string) string {
	list := changed
	if len(list) > 10 {
		list = append(list[:10:10], fmt.Sprintf("and %d more", len(changed)-10))
	}
	return fmt.Sprintf("the reviewer changed the work, which it may only read: %s; put back, and what it made of them kept in %s",
		strings.Join(list, ", "), kept)
}

// tamperedPaths are the paths of the changes.
func tamperedPaths(tamper []state.TamperMeta) []string {
	paths := make([]string, 0, len(tamper))
	for _, t := range tamper {
		paths = append(paths, t.Path)
	}
	return paths
}

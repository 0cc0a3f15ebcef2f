package engine

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/git"
)

// A local runner keeps an interrupted attempt's work (SPEC §8); so does
// a worker, on the iteration's remote at LeftoverRef, as a commit of its
// checkpoint. An iteration that does not finish on it (cancelled, or
// failed after its agent ran) is pushed there at once. A worker killed while its
// agents work leaves their worktrees in its folder; started again in the
// same folder, it pushes each before it clears the folder. Each
// iteration under way is noted in underway/ with what that takes.

// underwayFile is the note of the iteration whose worktree is work/name.
func (w *Worker) underwayFile(name string) string {
	return filepath.Join(w.Dir, "underway", name+".json")
}

// noteUnderway notes it as under way, once its worktree exists.
func (w *Worker) noteUnderway(it *iterationRun) error {
	in := it.in
	note := Input{Run: in.Run, Iteration: in.Iteration, Retry: in.Retry, Node: in.Node,
		Remote: in.Remote, Checkpoint: in.Checkpoint}
	data, err := json.Marshal(note)
	if err != nil {
		return err
	}
	p := w.underwayFile(filepath.Base(it.work))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o600)
}

// keepLeftovers pushes the work a previous life of this worker left in
// the worktrees of its iterations under way, each to its LeftoverRef;
// what it cannot push it says, and the folder is cleared after it all
// the same (the worker must be able to start).
func (w *Worker) keepLeftovers(ctx context.Context) {
	notes, _ := filepath.Glob(w.underwayFile("*"))
	for _, p := range notes {
		name := strings.TrimSuffix(filepath.Base(p), ".json")
		var in Input
		data, err := os.ReadFile(p)
		if err == nil {
			err = json.Unmarshal(data, &in)
		}
		var wt *git.Repo
		if err == nil {
			wt, err = git.Open(ctx, filepath.Join(w.Dir, "work", name), git.Options{})
		}
		if err != nil {
			w.logf("#%d %s: what the agent left in %s when this worker stopped could not be kept: %v", in.Iteration, in.Node, name, err)
			continue
		}
		w.pushLeftover(ctx, wt, in)
	}
	_ = os.RemoveAll(filepath.Join(w.Dir, "underway"))
}

// keepUnfinished pushes what the agent of it had written to its
// LeftoverRef when the iteration did not finish (it was cancelled: the
// run was interrupted, or this worker stopped; or the worker failed after
// the agent ran), as a local runner keeps an interrupted attempt's work;
// within a minute of its own, the iteration's context may be done.
func (w *Worker) keepUnfinished(it *iterationRun) {
	if it.wt == nil || !it.agent {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w.pushLeftover(ctx, it.wt, it.in)
}

// pushLeftover pushes the work in the worktree wt of iteration in to its
// LeftoverRef, when there is any, and says what came of it.
func (w *Worker) pushLeftover(ctx context.Context, wt *git.Repo, in Input) {
	ref := LeftoverRef(in.Run, in.Iteration, in.Retry)
	err := errors.New("its note is incomplete")
	if in.Remote != "" && in.Checkpoint != "" && in.Run != "" {
		var commit string
		if commit, err = w.commitWork(ctx, wt, in, "what was left"); err == nil {
			err = wt.Push(ctx, in.Remote, commit+":"+ref)
		}
	}
	switch {
	case errors.Is(err, git.ErrNoChange):
	case err != nil:
		w.logf("#%d %s: what the agent had written could not be kept: %v", in.Iteration, in.Node, err)
	default:
		w.logf("#%d %s: pushed what the agent had written to %s", in.Iteration, in.Node, ref)
	}
}

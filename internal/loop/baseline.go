package loop

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/iteration"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/strictjson"
	"github.com/runner-cli/runner/internal/tree"
)

// The baseline (SPEC §18): the preflight records what the guards find on
// the untouched checkpoint (state/baselines/), each task's guards are
// judged against the baseline of the checkpoint it started from, and
// what they found on a task that lands is the baseline of its commit.

// foundFile is the file of a run folder (or its integration folder)
// holding what the guards found there: the next baseline, should the
// task land.
const foundFile = "found.json"

// baselineKey is the key of the baseline of ck's checkpoint: its commit,
// or state.WorktreeBaseline without git checkpoints.
func baselineKey(ck *checkpoints) string {
	if ck == nil {
		return state.WorktreeBaseline
	}
	return ck.head
}

// baselineOf returns the baseline of key for the configured guards; nil
// when there is none, or it cannot be read (said in the log: the guards
// are then judged by their exit status).
func (r *Runner) baselineOf(key string) *state.Baseline {
	b, err := state.LoadBaseline(r.p, key, guardsDigest(r.cfg.Guards))
	if err != nil {
		r.log.Warn("the guards are judged by their exit status alone", "err", err)
		return nil
	}
	return b
}

// judgesOf are the guards and checks that judge meta's iteration in this
// worker's lane, against the baseline of key ("" for none).
func (r *worker) judgesOf(meta *state.Meta, key string) iteration.Guards {
	g := iteration.Guards{Work: r.workDir, Guards: r.cfg.Guards, Grace: r.cfg.Executor.KillGrace.Duration, Env: r.guardEnv(meta)}
	if meta.CheckSpecs == nil {
		// Resumed from the in-flight marker alone: the tree as it is now.
		if t, err := r.loadTree(); err == nil {
			meta.CheckSpecs = checkSpecs(checksOf(t, meta.Node))
			meta.Removes = removesOf(t, meta.Node)
		}
	}
	for _, c := range meta.CheckSpecs {
		g.Checks = append(g.Checks, iteration.CheckOf(c))
	}
	g.Removes = meta.Removes
	if key != "" {
		g.Baseline = r.baselineOf(key)
	}
	if room, _, err := r.rooms.Room(r.cfg, meta.Iteration, r.workDir); err == nil {
		g.Room = room
	}
	return g
}

// checkSpecs are checks as meta.json keeps them.
func checkSpecs(checks []nodeCheck) []state.CheckSpec {
	out := []state.CheckSpec{}
	for _, c := range checks {
		out = append(out, state.CheckSpec{Node: c.node, Name: c.Name, Run: c.Run, Timeout: c.Timeout, OutputLimit: c.OutputLimit, Report: c.Report})
	}
	return out
}

// nodeCheck is a check with the node that carries it.
type nodeCheck struct {
	node string
	tree.Check
}

// checksOf are the checks that judge node id (SPEC §18): its own, and
// those of each ancestor whose last open leaf it is (they judge the
// group, and their failure is this task's).
func checksOf(t *tree.Tree, id string) []nodeCheck {
	ix := tree.NewIndex(t)
	node := ix.Node(id)
	if node == nil {
		return nil
	}
	var out []nodeCheck
	add := func(n *tree.Node) {
		for _, c := range n.Checks {
			out = append(out, nodeCheck{n.ID, c})
		}
	}
	add(node)
	for a := ix.Parent(node.ID); a != nil; a = ix.Parent(a.ID) {
		if !lastOpenLeaf(a, node) {
			break
		}
		add(a)
	}
	return out
}

// removesOf are the tests node id's work may remove (SPEC §18): its own
// removes and its ancestors' (a group's removes hold for each of its
// tasks).
func removesOf(t *tree.Tree, id string) []string {
	ix := tree.NewIndex(t)
	var out []string
	for n := ix.Node(id); n != nil; n = ix.Parent(n.ID) {
		out = append(out, n.Removes...)
	}
	return out
}

// lastOpenLeaf reports whether every leaf below a but node is done.
func lastOpenLeaf(a, node *tree.Node) bool {
	last := true
	var walk func(n *tree.Node)
	walk = func(n *tree.Node) {
		if !last || n == node {
			return
		}
		if n.IsLeaf() {
			last = n.EffectiveStatus() == tree.StatusDone
			return
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(a)
	return last
}

// checkGuard is a check as a guard runs it, the guards' defaults applied.
func checkGuard(c tree.Check) config.Guard {
	return iteration.CheckOf(state.CheckSpec{Name: c.Name, Run: c.Run, Timeout: c.Timeout, OutputLimit: c.OutputLimit, Report: c.Report}).Guard
}

// saveFound keeps what the guards found in dir, for the baseline of the
// task's commit once it lands.
func saveFound(dir string, found []state.BaselineGuard) error {
	return fsutil.ReplaceJSON(filepath.Join(dir, foundFile), found, fsutil.NotSynced)
}

// followBaseline makes what the guards found on a task that landed (in
// dir: the run folder, or its integration folder when the guards ran on
// the integrated result) the baseline of its commit, and the run state's
// preflight, when the guards judged the task against the baseline of
// parent with the same guards.
func (r *Runner) followBaseline(meta *state.Meta, parent, commit, dir string) {
	c := r.ledger.Preflight()
	digest := guardsDigest(r.cfg.Guards)
	if parent == commit || meta.Guard != state.GuardPass || len(r.cfg.Guards) == 0 {
		return
	}
	var found []state.BaselineGuard
	data, err := fsutil.ReadLimited(filepath.Join(dir, foundFile), 256<<20, true)
	if err == nil {
		err = strictjson.Decode(data, &found, 8)
	}
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			r.log.Warn("what the guards found on the task is not the next baseline", "iteration", meta.Iteration, "err", err)
		}
		return
	}
	b := &state.Baseline{Key: commit, Guards: digest, At: time.Now().UTC(), From: fmt.Sprintf("iteration %d", meta.Iteration), Results: found}
	if err := state.SaveBaseline(r.p, b); err != nil {
		r.log.Warn("could not keep the baseline of the task's commit; the next run's preflight finds it", "commit", short(commit), "err", err)
		return
	}
	if c != nil && c.Commit == parent && c.Guards == digest {
		next := *c
		next.Commit = commit
		r.ledger.SetPreflight(&next)
	}
	var inUse []string
	if c != nil {
		inUse = append(inUse, c.Commit)
	}
	if r.par != nil {
		for _, s := range r.par.slots {
			if s != nil && s.ck != nil {
				inUse = append(inUse, s.ck.head)
			}
		}
	}
	state.PruneBaselines(r.p, 2*r.cfg.Loop.Parallel+4, append(inUse, commit, parent)...)
}

// probeChecks runs a task's own checks once on its untouched checkpoint,
// before its first attempt (SPEC §18): a check that passes there cannot
// tell whether the task is done. It notes those in meta.Vacuous and says
// so; they still judge the task.
func (r *worker) probeChecks(ctx context.Context, node *tree.Node, meta *state.Meta) {
	if node.Attempts > 0 || len(node.Checks) == 0 {
		return
	}
	checks := make([]iteration.Check, len(node.Checks))
	for i, c := range node.Checks {
		checks[i] = iteration.Check{Node: node.ID, Guard: checkGuard(c)}
	}
	dir := filepath.Join(r.p.RunDir(meta.Iteration), "checks-before")
	if err := fsutil.MkdirAll(dir, 0o755); err != nil {
		return
	}
	room, _, err := r.rooms.Room(r.cfg, meta.Iteration, r.workDir)
	if err != nil {
		return
	}
	passing, tally, err := iteration.Probe(ctx, r.workDir, checks, r.cfg.Executor.KillGrace.Duration, r.guardEnv(meta), room, dir, iteration.Hooks{Outside: r.outside})
	if err != nil {
		return
	}
	meta.ChecksBefore = tally
	if len(passing) == 0 {
		return
	}
	meta.Vacuous = passing
	fmt.Fprintf(r.out, "#%d %-24s check %s passes before any work: it proves nothing about this task\n",
		meta.Iteration, inert.Line(meta.NodePath), inert.Line(strings.Join(passing, ", ")))
}

package loop

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/guard"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/iteration"
	"github.com/runner-cli/runner/internal/state"
)

// The preflight (SPEC §13, §18): before the first agent of a `runner
// run`, the guards run once on the untouched checkpoint, and what they
// find is its baseline (baseline.go). A guard with a test report that
// fails there judges tasks by regression: its tests that already fail may
// keep failing. A guard without one that fails there fails every task
// whatever its agent does, so the run stops with an error before any
// agent is paid: no iteration begins, no attempt is spent, and the
// guards' logs go to state/preflight/, not to a run folder.
//
// With git checkpoints a preflight is kept in the run state
// (ledger.SetPreflight), keyed by the checkpoint's commit and a digest of
// the guards, its baseline in state/baselines/; the runner's own task
// commits carry it along (the task's guards ran on them), so it runs
// again only when the guards changed or the run branch moved otherwise.
// A working tree that holds changes since the checkpoint (a failed
// attempt's, kept for its next attempt) is not the untouched checkpoint:
// the preflight waits for a run that starts on a clean one. Without
// checkpoints there is no commit to key a result by: the preflight runs
// at every `runner run` whose working tree holds no failed attempt's
// leftovers, that is, before any iteration was recorded or when the last
// one succeeded.

// Bounds on the head of a failing guard's output the error quotes, and
// on the failing tests the baseline's summary names.
const (
	preflightHeadLines = 15
	preflightHeadBytes = 2 << 10
	baselineNames      = 5
)

// preflight runs the preflight before the run's first agent; later calls
// do nothing. It returns an error, which ends the run, when a guard
// without a test report fails or the guards were interrupted.
func (r *Runner) preflight(ctx context.Context) error {
	if r.preflighted {
		return nil
	}
	r.preflighted = true
	if r.opts.NoPreflight || !r.cfg.Verify.Preflight || len(r.cfg.Guards) == 0 {
		return nil
	}
	digest := guardsDigest(r.cfg.Guards)
	on, key := "the working tree", state.WorktreeBaseline
	if ck := r.main; ck != nil {
		on, key = "the checkpoint "+short(ck.head), ck.head
		if c := r.ledger.Preflight(); c != nil && c.Commit == ck.head && c.Guards == digest && r.baselineOf(key) != nil {
			fmt.Fprintf(r.opts.Notices, "runner: preflight: the guards ran on %s before; not run again (its baseline stands)\n", on)
			return nil
		}
		if ck.dirty != "" {
			fmt.Fprintf(r.opts.Notices, "runner: preflight skipped: the working tree holds changes since %s (a failed attempt's, kept for its next attempt); it runs when a run starts on a clean checkpoint\n", on)
			return nil
		}
	} else if !untouched(r.ledger.State()) {
		fmt.Fprintln(r.opts.Notices, "runner: preflight skipped: the last attempt failed and left its changes in the working tree (no git checkpoint to go back to)")
		return nil
	}
	fmt.Fprintf(r.opts.Notices, "runner: preflight: running the guards on %s before any agent\n", on)
	results, err := r.runPreflightGuards(ctx)
	if err != nil {
		return fmt.Errorf("preflight: %w", err)
	}
	if failed := r.preflightFailure(on, results); failed != nil {
		return failed
	}
	b := &state.Baseline{Key: key, Guards: digest, At: time.Now().UTC(), From: "preflight"}
	for i, res := range results {
		b.Results = append(b.Results, iteration.Found(r.cfg.Guards[i], res))
	}
	if err := state.SaveBaseline(r.p, b); err != nil {
		return fmt.Errorf("preflight: keep the baseline: %w", err)
	}
	if r.main != nil {
		pf := &state.Preflight{Commit: r.main.head, Guards: digest, At: b.At}
		if t := state.TallyOf(b); t != nil {
			pf.Passing = &t.Passing
		}
		r.ledger.SetPreflight(pf)
	}
	r.sayBaseline(on, b)
	if _, err := os.Stat(r.p.StopRequest()); err == nil {
		return stopAfterPreflight{}
	}
	return nil
}

// sayBaseline says what the preflight found: passed, or for each guard
// with failing tests or units whose tests could not run, how many, the
// first names and the file holding them all (state/preflight/failing.txt).
func (r *Runner) sayBaseline(on string, b *state.Baseline) {
	var all strings.Builder
	var lines []string
	for _, g := range b.Results {
		if len(g.Failing) == 0 && len(g.Broken) == 0 {
			continue
		}
		total := len(g.Failing) + len(g.Passing) + g.Skipped
		fmt.Fprintf(&all, "# guard %s: %d of %d tests fail on %s\n%s\n", g.Name, len(g.Failing), total, on, strings.Join(g.Failing, "\n"))
		var parts []string
		if len(g.Failing) > 0 {
			parts = append(parts, fmt.Sprintf("%d of %d tests already fail (%s)", len(g.Failing), total, inert.Line(listHead(g.Failing, baselineNames))))
		}
		if len(g.Broken) > 0 {
			fmt.Fprintf(&all, "# guard %s: %d part(s) whose tests cannot run on %s (a package that does not build, a module that cannot be collected)\n%s\n", g.Name, len(g.Broken), on, strings.Join(g.BrokenNames(), "\n"))
			parts = append(parts, fmt.Sprintf("%d part(s) whose tests cannot run (%s)", len(g.Broken), inert.Line(listHead(g.BrokenNames(), baselineNames))))
		}
		lines = append(lines, fmt.Sprintf("guard %s: %s", inert.Line(g.Name), strings.Join(parts, ", ")))
	}
	file := filepath.Join(r.p.PreflightDir(), "failing.txt")
	if len(lines) == 0 {
		fsutil.Remove(file)
		fmt.Fprintf(r.opts.Notices, "runner: preflight passed on %s\n", on)
		return
	}
	fsutil.ReplaceFile(file, []byte(all.String()), 0o644, fsutil.NotSynced)
	fmt.Fprintf(r.opts.Notices, "runner: preflight: the baseline on %s: %s; all in %s. Tasks are judged by test: a test that passes now must keep running and passing, new tests must pass, these may keep failing until a task's checks make them pass\n",
		on, strings.Join(lines, "; "), r.p.Rel(file))
}

// stopAfterPreflight ends the run when `runner stop` was asked while the
// preflight ran: no agent starts. It is a stop asked while waiting, to
// Run (which consumes the request).
type stopAfterPreflight struct{}

func (stopAfterPreflight) Error() string { return "after the preflight, before any agent started" }

func (stopAfterPreflight) Is(target error) bool { return target == errStopWhileWaiting }

// runPreflightGuards runs the guards in the working tree, their logs in
// state/preflight/, with the ledger's care for the runner's files as
// around an iteration's guards. Their environment has RUNNER_DIR, and no
// RUNNER_ITERATION or RUNNER_NODE_ID: no iteration runs.
func (r *Runner) runPreflightGuards(ctx context.Context) ([]guard.Result, error) {
	dir := r.p.PreflightDir()
	if err := fsutil.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", r.p.Rel(dir), err)
	}
	r.killLeftoverPreflight()
	r.ledger.GuardsStarting()
	// Iteration 0's room: the guards run the repository's code.
	room, tmp, err := r.rooms.Room(r.cfg, 0, r.mainDir)
	if err != nil {
		return nil, err
	}
	defer r.rooms.RemoveTempDir(0)
	results, _, err := guard.RunJudged(ctx, r.mainDir, r.cfg.Guards, filepath.Join(dir, "guard.log"), filepath.Join(dir, "failure.log"),
		r.cfg.Executor.KillGrace.Duration, append([]string{"RUNNER_DIR=" + r.p.Dir, preflightMark}, tmpEnv(tmp)...), nil, room)
	if ierr := r.ledger.GuardsEnded(0); ierr != nil {
		return nil, ierr
	}
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return results, err
}

// stopsRun reports whether a guard's result on the untouched checkpoint
// stops the run: it failed, and not with a test report that was read
// (which judges tasks by regression instead), or it timed out.
func stopsRun(res guard.Result) bool {
	return res.Status != guard.StatusPass && (res.Report == nil || res.Status == guard.StatusTimeout)
}

// preflightFailure is the error that stops the run when a guard without
// a test report failed on; nil otherwise. It names each such guard with
// the head of its output, secrets redacted as in a prompt: the run's
// output often ends up in a log that is less private than guard.log.
func (r *Runner) preflightFailure(on string, results []guard.Result) error {
	if !slices.ContainsFunc(results, stopsRun) {
		return nil
	}
	dir := r.p.PreflightDir()
	heads := guard.Heads(filepath.Join(dir, "failure.log"), r.cfg.Guards, results, preflightHeadLines, preflightHeadBytes)
	scrubber, err := r.scrubberFor(r.cfg)
	if err != nil {
		return err
	}
	for i := range heads {
		heads[i], _ = scrubber.Redact(heads[i])
	}
	var b strings.Builder
	k := 0
	for _, res := range results {
		if res.Status == guard.StatusPass {
			continue
		}
		if !stopsRun(res) {
			k++ // its head is in heads, and not quoted
			continue
		}
		why := res.Error
		if res.ReportErr != nil {
			why += "; its test report could not be read: " + res.ReportErr.Error()
		}
		if why == "" {
			why = res.Status
		}
		fmt.Fprintf(&b, "\n  guard %s: %s", inert.Line(res.Name), inert.Line(why))
		if k < len(heads) && heads[k] != "" {
			for _, line := range strings.Split(heads[k], "\n") {
				b.WriteString("\n    " + inert.Text(line))
			}
		}
		k++
	}
	return fmt.Errorf("preflight: the guards fail on %s before any agent ran; every task would fail them too, so the run stops here (no agent ran, no attempt was spent):%s\n"+
		"the whole output is in %s. If the tasks are meant to make these guards pass, either give each guard a test report (report = \"go-json\", \"tap\", \"unittest\" for python3 -m unittest -v, or \"junit:PATH\" in its [[guard]]), so that tasks are judged test by test against what already fails, "+
		"or move the command into the tasks' own checks in tree.json (\"checks\": [{\"name\": ..., \"run\": ...}]), so that each task is judged by its own tests; otherwise fix the code or the guards (.runner/config.toml) and run again",
		on, b.String(), r.p.Rel(filepath.Join(dir, "guard.log")))
}

// untouched tells, without git checkpoints, whether the working tree is
// free of a failed attempt's leftovers: no iteration was recorded yet, or
// the last one succeeded (done with guards that did not fail, or
// decomposed), so its changes were accepted.
func untouched(rs *state.RunState) bool {
	if rs.Iteration == 0 {
		return true
	}
	switch rs.LastStatus {
	case "done":
		return rs.LastGuard != state.GuardFail
	case "decomposed":
		return true
	}
	return false
}

// reportModel numbers what a baseline keeps of a report: a baseline
// kept under another model (before broken units, when a Go package was
// a test) is not compared with; the preflight runs again.
const reportModel = 2

// guardsDigest identifies the guard definitions, each field that can
// change a verdict: a preflight that passed stands for these guards only.
func guardsDigest(guards []config.Guard) string {
	h := sha256.New()
	for _, g := range guards {
		fmt.Fprintf(h, "%q %q %d %d", g.Name, g.Run, g.Timeout.Duration, g.OutputLimit)
		if g.Report != "" {
			fmt.Fprintf(h, " %q %d", g.Report, reportModel)
		}
		fmt.Fprintln(h)
	}
	return hex.EncodeToString(h.Sum(nil))
}

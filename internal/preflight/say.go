package preflight

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/guard"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/textfmt"
)

// say says what the preflight found: passed, or for each guard
// with failing tests or units whose tests could not run, how many, the
// first names and the file holding them all (state/preflight/failing.txt).
func (b *Baselines) say(on string, base *state.Baseline) {
	var all strings.Builder
	var lines []string
	for _, g := range base.Results {
		if len(g.Failing) == 0 && len(g.Broken) == 0 {
			continue
		}
		total := len(g.Failing) + len(g.Passing) + g.Skipped
		fmt.Fprintf(&all, "# guard %s: %d of %d tests fail on %s\n%s\n", g.Name, len(g.Failing), total, on, strings.Join(g.Failing, "\n"))
		var parts []string
		if len(g.Failing) > 0 {
			parts = append(parts, fmt.Sprintf("%d of %d tests already fail (%s)", len(g.Failing), total, inert.Line(textfmt.Head(g.Failing, baselineNames))))
		}
		if len(g.Broken) > 0 {
			fmt.Fprintf(&all, "# guard %s: %d part(s) whose tests cannot run on %s (a package that does not build, a module that cannot be collected)\n%s\n", g.Name, len(g.Broken), on, strings.Join(g.BrokenNames(), "\n"))
			parts = append(parts, fmt.Sprintf("%d part(s) whose tests cannot run (%s)", len(g.Broken), inert.Line(textfmt.Head(g.BrokenNames(), baselineNames))))
		}
		lines = append(lines, fmt.Sprintf("guard %s: %s", inert.Line(g.Name), strings.Join(parts, ", ")))
	}
	file := filepath.Join(b.p.PreflightDir(), "failing.txt")
	if len(lines) == 0 {
		fsutil.Remove(file)
		fmt.Fprintf(b.notices, "runner: preflight passed on %s\n", on)
		return
	}
	fsutil.ReplaceFile(file, []byte(all.String()), 0o644, fsutil.NotSynced)
	fmt.Fprintf(b.notices, "runner: preflight: the baseline on %s: %s; all in %s. Tasks are judged by test: a test that passes now must keep running and passing, new tests must pass, these may keep failing until a task's checks make them pass\n",
		on, strings.Join(lines, "; "), b.p.Rel(file))
}

// stopsRun reports whether a guard's result on the untouched checkpoint
// stops the run: it failed, and not with a test report that was read
// (which judges tasks by regression instead), or it timed out.
func stopsRun(res guard.Result) bool {
	return res.Status != guard.StatusPass && (res.Report == nil || res.Status == guard.StatusTimeout)
}

// failure is the error that stops the run when a guard without
// a test report failed on; nil otherwise. It names each such guard with
// the head of its output, secrets redacted as in a prompt: the run's
// output often ends up in a log that is less private than guard.log.
func (b *Baselines) failure(cfg *config.Config, on string, results []guard.Result, env Env) error {
	if !slices.ContainsFunc(results, stopsRun) {
		return nil
	}
	dir := b.p.PreflightDir()
	heads := guard.Heads(filepath.Join(dir, "failure.log"), cfg.Guards, results, preflightHeadLines, preflightHeadBytes)
	scrubber, err := env.Scrubber()
	if err != nil {
		return err
	}
	for i := range heads {
		heads[i], _ = scrubber.Redact(heads[i])
	}
	var w strings.Builder
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
		fmt.Fprintf(&w, "\n  guard %s: %s", inert.Line(res.Name), inert.Line(why))
		if k < len(heads) && heads[k] != "" {
			for _, line := range strings.Split(heads[k], "\n") {
				w.WriteString("\n    " + inert.Text(line))
			}
		}
		k++
	}
	return fmt.Errorf("preflight: the guards fail on %s before any agent ran; every task would fail them too, so the run stops here (no agent ran, no attempt was spent):%s\n"+
		"the whole output is in %s. If the tasks are meant to make these guards pass, either give each guard a test report (report = \"go-json\", \"tap\", \"unittest\" for python3 -m unittest -v, or \"junit:PATH\" in its [[guard]]), so that tasks are judged test by test against what already fails, "+
		"or move the command into the tasks' own checks in tree.json (\"checks\": [{\"name\": ..., \"run\": ...}]), so that each task is judged by its own tests; otherwise fix the code or the guards (.runner/config.toml) and run again",
		on, w.String(), b.p.Rel(filepath.Join(dir, "guard.log")))
}

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/prompt"
	"github.com/runner-cli/runner/internal/state"
)

type showOptions struct {
	JSON   bool
	Follow bool
}

func newShowCmd(g *globals) *cobra.Command {
	opts := &showOptions{}
	cmd := &cobra.Command{
		Use:   "show [ITERATION]",
		Short: "Show what happened in an iteration (default: the last one)",
		Long: `Show what happened in an iteration (default: the last one), from its
.runner/runs/N/meta.json: the task, the prompt's size, the agent's run and its
message (summary, assumptions, questions, children), the commands and files in
its event stream, the guards and the outcome. For an iteration still in flight,
where it stands. For one whose run folder loop.keep_runs pruned, what
state/journal.jsonl and state/journal.1.jsonl still hold about it: its node,
events, outcome and summary.`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeIterations(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runShow(cmd.Context(), g, opts, args)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the iteration's meta.json")
	cmd.Flags().BoolVar(&opts.Follow, "follow", false, "stream an iteration under way (what its agent prints, its latest events) until it is recorded, then show it")
	return cmd
}

func runShow(ctx context.Context, g *globals, opts *showOptions, args []string) error {
	p, err := g.paths()
	if err != nil {
		return err
	}
	n := 0
	if len(args) == 1 {
		n, err = strconv.Atoi(args[0])
		if err != nil || n < 1 {
			return fmt.Errorf("show: %q is not an iteration number (1, 2, …)", args[0])
		}
	} else {
		if n, err = state.LatestRun(p); err != nil {
			return err
		}
		if n == 0 {
			return errors.New("show: no iteration has run yet in this repository")
		}
	}
	if opts.Follow && !opts.JSON {
		return followIteration(ctx, g, p, n)
	}
	runDir := p.RunDir(n)
	m, err := state.LoadMeta(runDir)
	if errors.Is(err, os.ErrNotExist) {
		// meta.json is first written when the iteration's agent is done.
		var in *state.InFlight
		if rs, rerr := state.LoadRunState(p.RunState()); rerr == nil {
			for _, f := range state.CurrentInFlights(p, rs) {
				if f.Iteration == n {
					in = f
				}
			}
		}
		if in != nil {
			where := ""
			if in.Slot > 0 {
				where = fmt.Sprintf(", slot %d", in.Slot)
			}
			if in.Worker != "" {
				where += ", on worker " + inert.Line(in.Worker)
			}
			fmt.Fprintf(g.streams.Out, "iteration %d — %s: in flight (phase %s, since %s%s)\n", n, inert.Line(in.Node), inert.Line(in.Phase),
				in.StartedAt.Local().Format("2006-01-02 15:04:05"), where)
			fmt.Fprintf(g.streams.Out, "its meta.json is written once its agent is done; the prompt is in %s\n", rel(p, filepath.Join(runDir, "prompt.md")))
			return nil
		}
		return showMissing(g.streams.Out, p, n, opts.JSON)
	}
	if err != nil {
		return err
	}
	if opts.JSON {
		enc := json.NewEncoder(g.streams.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(m)
	}
	printMeta(g.streams.Out, p, runDir, m)
	return nil
}

func printMeta(w io.Writer, p state.Paths, runDir string, m *state.Meta) {
	if m.Plan != nil {
		printPlanHeader(w, m)
	} else {
		fmt.Fprintf(w, "iteration %d — %s (attempt %d of %d)\n", m.Iteration, inert.Line(m.NodePath), m.Attempt, m.MaxAttempts)
	}
	fmt.Fprintf(w, "started:  %s", m.StartedAt.Local().Format("2006-01-02 15:04:05"))
	if m.FinishedAt != nil {
		fmt.Fprintf(w, ", took %.1fs", float64(m.DurationMS)/1000)
	}
	fmt.Fprintf(w, ", phase %s\n", inert.Line(m.Phase))
	if m.Slot > 0 {
		fmt.Fprintf(w, "slot:     %d (a worktree of its own; SPEC §14)\n", m.Slot)
	}
	if m.Worker != "" {
		fmt.Fprintf(w, "worker:   %s (the agent and the guards ran there; SPEC §22)\n", inert.Line(m.Worker))
	}
	if c := m.Conflict; c != nil {
		what := "the guards failed on the task brought onto the run branch"
		if c.Kind == "conflict" {
			what = "conflict in " + inert.Line(strings.Join(c.Files, ", "))
		}
		fmt.Fprintf(w, "integration: %s (onto %s); the task went back to work from the new checkpoint\n", what, inert.Line(shortID(c.Onto)))
	}
	fmt.Fprintf(w, "prompt:   %d of %d bytes", m.Prompt.Bytes, m.Prompt.Budget)
	if len(m.Prompt.Dropped) > 0 {
		fmt.Fprintf(w, "; %s", strings.Join(inert.Lines(m.Prompt.Dropped), ", "))
	}
	fmt.Fprintln(w)
	if prov := readProvenance(runDir); prov != nil {
		fmt.Fprintf(w, "context:  %s", inert.Line(prov.InjectionID))
		var parts []string
		for _, s := range prov.Sections {
			if s.State != "empty" {
				parts = append(parts, fmt.Sprintf("%s %dB %s", inert.Line(s.Key), s.Bytes, inert.Line(s.State)))
			}
		}
		fmt.Fprintf(w, "; %s\n", strings.Join(parts, ", "))
		if len(prov.Redactions) > 0 {
			var red []string
			for rule, c := range prov.Redactions {
				red = append(red, fmt.Sprintf("%s×%d", inert.Line(rule), c))
			}
			fmt.Fprintf(w, "redacted: %s\n", strings.Join(red, ", "))
		}
	}
	if m.Executor != "" {
		fmt.Fprintf(w, "executor: %s\n", inert.Line(m.Executor))
	}
	if m.Rung != nil {
		fmt.Fprintf(w, "ladder:   %s\n", inert.Line(m.Rung.String()))
	}
	if h := m.CostCap; h != nil {
		who := "agent"
		if h.By != "" {
			who = h.By
		}
		fmt.Fprintf(w, "capped:   the runner stopped the %s: %s\n", inert.Line(who), inert.Line(h.String()))
	}
	if a := m.Agent; a != nil {
		fmt.Fprintf(w, "agent:    %s", agentEnd(a))
		if a.MessageSource != "" {
			fmt.Fprintf(w, ", message from %s", inert.Line(a.MessageSource))
		}
		fmt.Fprintln(w)
		if len(a.Argv) > 0 {
			fmt.Fprintf(w, "command:  %s\n", strings.Join(inert.Lines(a.Argv), " "))
		}
		if a.Error != "" {
			fmt.Fprintf(w, "error:    %s\n", firstLine(a.Error))
		}
		if a.MessageError != "" && a.MessageError != a.Error {
			fmt.Fprintf(w, "message:  %s\n", firstLine(a.MessageError))
		}
		if a.Evidence != "" {
			fmt.Fprintf(w, "evidence: %s\n", firstLine(a.Evidence))
		}
		for _, rl := range a.RateLimits {
			reset := ""
			if rl.ResetAt != nil {
				reset = ", resets " + rl.ResetAt.Local().Format("2006-01-02 15:04")
			}
			fmt.Fprintf(w, "limited:  %s exit %d%s, waited %s: %s\n", rl.At.Local().Format("15:04:05"), rl.ExitCode, reset,
				time.Duration(rl.WaitMS)*time.Millisecond, firstLine(rl.Evidence))
		}
		if len(a.PermissionDenials) > 0 {
			fmt.Fprintf(w, "refused:  %d tool calls (permission_denials; see executor.args):\n", len(a.PermissionDenials))
			for _, d := range a.PermissionDenials {
				fmt.Fprintf(w, "          %s %s\n", inert.Line(d.Tool), inert.Line(d.Input))
			}
		}
	}
	if m.Usage != nil {
		fmt.Fprintf(w, "usage:    %s\n", m.Usage)
	}
	printEventSummary(w, p, runDir)
	if m.AgentStatus != "" {
		fmt.Fprintf(w, "status:   %s\n", inert.Line(m.AgentStatus))
	}
	if m.Summary != "" {
		fmt.Fprintf(w, "summary:  %s\n", indentRest(m.Summary))
	}
	printMessageNotes(w, m)
	for _, gr := range m.Guards {
		fmt.Fprintf(w, "guard:    %-12s %-7s exit %d, %.1fs%s\n", inert.Line(gr.Name), inert.Line(gr.Status), gr.ExitCode, float64(gr.DurationMS)/1000, judgeDetail(gr))
	}
	for _, gr := range m.Checks {
		of := ""
		if gr.Node != m.Node {
			of = " (of " + inert.Line(gr.Node) + ")"
		}
		fmt.Fprintf(w, "check:    %-12s %-7s exit %d, %.1fs%s%s\n", inert.Line(gr.Name), inert.Line(gr.Status), gr.ExitCode, float64(gr.DurationMS)/1000, of, judgeDetail(gr))
	}
	if len(m.Vacuous) > 0 {
		fmt.Fprintf(w, "vacuous:  %s passed before any work: it proves nothing about this task\n", inert.Line(strings.Join(m.Vacuous, ", ")))
	}
	if m.Unconfined != "" {
		fmt.Fprintf(w, "sandbox:  NOT confined: %s\n", inert.Line(m.Unconfined))
	}
	for _, o := range m.Openings {
		fmt.Fprintf(w, "sandbox:  room left open: %s\n", inert.Line(o))
	}
	if m.Baseline != "" {
		fmt.Fprintf(w, "baseline: the guards were judged by test against %s\n", inert.Line(shortID(m.Baseline)))
	}
	if len(m.Hidden) > 0 {
		more := ""
		if m.HiddenMore > 0 {
			more = fmt.Sprintf(" and %d more", m.HiddenMore)
		}
		fmt.Fprintf(w, "hidden:   %s%s: made by the work outside what lands, not seen by the guards\n", inert.Line(strings.Join(m.Hidden, ", ")), more)
	}
	printReview(w, p, runDir, m.Review)
	if m.Plan != nil {
		printPlanMeta(w, m)
	} else if m.Outcome != "" {
		fmt.Fprintf(w, "outcome:  %s → task %s, attempts %d\n", inert.Line(m.Outcome), inert.Line(m.NodeStatus), m.Attempts)
	}
	if m.Note != "" {
		fmt.Fprintf(w, "note:     %s\n", indentRest(m.Note))
	}
	printCheckpoint(w, m)
	printTamper(w, m, runDir)
	entries, _ := fsutil.ReadDir(runDir)
	var files []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), fsutil.TempPrefix) {
			files = append(files, e.Name())
		}
	}
	fmt.Fprintf(w, "files:    %s/{%s}\n", rel(p, runDir), strings.Join(inert.Lines(files), ","))
}

// printReview says what the reviewer made of the work (SPEC §17): its
// verdict, or that it has none yet, with the reasons and what its runs
// that gave none said.
func printReview(w io.Writer, p state.Paths, runDir string, rv *state.ReviewMeta) {
	if rv == nil {
		return
	}
	verdict := rv.Verdict
	switch verdict {
	case "":
		verdict = "none yet"
	case state.VerdictSkipped:
		verdict = "skipped: the reviewer failed and review.on_error = \"accept\" took the task as done unreviewed"
	}
	fmt.Fprintf(w, "review:   %s, by %s", inert.Line(verdict), inert.Line(rv.Executor))
	if rv.Rejection > 0 {
		fmt.Fprintf(w, " (rejection %d)", rv.Rejection)
	}
	if rv.Asked > 1 {
		fmt.Fprintf(w, ", asked %d times", rv.Asked)
	}
	fmt.Fprintln(w)
	for _, reason := range rv.Reasons {
		fmt.Fprintf(w, "reason:   %s\n", indentRest(reason))
	}
	if rv.Error != "" {
		fmt.Fprintf(w, "reviewer: %s\n", indentRest(rv.Error))
	}
	if rv.Usage != nil {
		fmt.Fprintf(w, "          usage %s\n", rv.Usage)
	}
	if rv.Kept != "" {
		fmt.Fprintf(w, "          what the reviewer changed is kept in %s\n", inert.Line(rv.Kept))
	}
	fmt.Fprintf(w, "          its prompt and logs: %s/\n", rel(p, filepath.Join(runDir, "review")))
}

// printMessageNotes lists the assumptions, questions and children of the
// agent's message, one line each.
func printMessageNotes(w io.Writer, m *state.Meta) {
	if len(m.Message) == 0 {
		return
	}
	var msg struct {
		Assumptions []string `json:"assumptions"`
		Questions   []string `json:"questions"`
		Children    []struct {
			ID    string `json:"id"`
			Title string `json:"title"`
		} `json:"children"`
	}
	if json.Unmarshal(m.Message, &msg) != nil {
		return
	}
	for _, a := range msg.Assumptions {
		fmt.Fprintf(w, "assumed:  %s\n", oneLineCut(a, 200))
	}
	for _, q := range msg.Questions {
		fmt.Fprintf(w, "question: %s\n", oneLineCut(q, 200))
	}
	for _, c := range msg.Children {
		fmt.Fprintf(w, "child:    %s  %s\n", inert.Line(c.ID), inert.Line(c.Title))
	}
}

// indentRest escapes multi-line text and indents its lines after the
// first under a field's value.
func indentRest(s string) string {
	return strings.ReplaceAll(inert.Text(strings.TrimSpace(s)), "\n", "\n          ")
}

func readProvenance(runDir string) *prompt.Provenance {
	data, err := fsutil.ReadLimited(filepath.Join(runDir, "context.json"), 4<<20, true)
	if err != nil {
		return nil
	}
	var prov prompt.Provenance
	if json.Unmarshal(data, &prov) != nil {
		return nil
	}
	return &prov
}

// printTamper lists what the agent changed of the files that judge it
// (SPEC §13): each was put back, and its version is kept in the run folder.
func printTamper(w io.Writer, m *state.Meta, runDir string) {
	for i, t := range m.Tamper {
		label := "tamper:"
		if i > 0 {
			label = ""
		}
		line := fmt.Sprintf("%s %s, put back", inert.Line(t.Path), inert.Line(t.Change))
		if t.Kept != "" {
			line += "; the agent's version: " + filepath.Join(runDir, filepath.FromSlash(inert.Line(t.Kept)))
		}
		fmt.Fprintf(w, "%-10s%s\n", label, line)
	}
}

// printCheckpoint says what git kept of the iteration: its task's commit
// on the run branch with the diffstat, or the ref keeping a failed
// attempt's changes, and the commands to look at them or bring them back.
func printCheckpoint(w io.Writer, m *state.Meta) {
	if c := m.Checkpoint; c != nil {
		commit := inert.Line(c.Commit)
		fmt.Fprintf(w, "commit:   %s on %s (see it: git show %s)\n", commit, inert.Line(c.Branch), shortID(commit))
		if c.Diffstat != "" {
			fmt.Fprintf(w, "          %s\n", indentRest(strings.TrimRight(c.Diffstat, "\n")))
		}
	}
	if ref := m.AttemptRef; ref != "" {
		ref = inert.Line(ref)
		fmt.Fprintf(w, "attempt:  %s keeps this attempt's changes\n", ref)
		fmt.Fprintf(w, "          see them: git diff %s~1 %s   (git show --stat %s)\n", ref, ref, ref)
		fmt.Fprintf(w, "          bring them back: git restore --source=%s --worktree -- .\n", ref)
	}
}

// judgeDetail is what a guard's or check's test report and baseline
// add to its line: its tests, the regressed ones, how it was judged.
func judgeDetail(g state.GuardMeta) string {
	var parts []string
	if t := state.Tally([]state.GuardMeta{g}); t != nil {
		parts = append(parts, inert.Line(t.String()))
	}
	for _, l := range []struct {
		what  string
		names []string
	}{{"regressed", g.Regressed}, {"new failing", g.NewFailing}, {"vanished", g.Vanished}, {"broken now", g.NewBroken}} {
		if len(l.names) > 0 {
			parts = append(parts, l.what+": "+strings.Join(inert.Lines(l.names), ", "))
		}
	}
	if g.Note != "" {
		parts = append(parts, inert.Line(g.Note))
	}
	if g.ReportError != "" {
		parts = append(parts, "report unreadable, judged by exit status: "+inert.Line(g.ReportError))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, "; ")
}

// agentEnd says how an agent's run ended: its class, exit status and
// length; an interrupted one, how long it ran, when known.
func agentEnd(a *state.AgentMeta) string {
	took := fmt.Sprintf("%.1fs", float64(a.DurationMS)/1000)
	if a.Class != executor.ClassInterrupted {
		return fmt.Sprintf("%s, exit %d, %s", inert.Line(a.Class), a.ExitCode, took)
	}
	if a.DurationMS <= 0 {
		return "interrupted (how long it ran is not known)"
	}
	return "interrupted after " + took
}

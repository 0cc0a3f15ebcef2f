package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/outcome"
	"github.com/runner-cli/runner/internal/textfmt"
)

// WriteText writes the report as Markdown for a person: headings, lists
// and code spans, readable as it is on a terminal and rendered in a
// pull request or an issue. Text that came from the agent, the tree or
// the journal is made inert (package inert) and kept to one line.
func WriteText(w io.Writer, r *Report) error {
	t := &textWriter{w: w}
	t.header(r)
	t.blocked(r)
	t.done(r)
	t.failed(r)
	t.interrupted(r)
	if len(r.Decomposed) > 0 {
		t.decomposed(r)
	}
	t.anomalies(r)
	t.usage(r)
	return t.err
}

// textWriter writes lines, keeping the first error.
type textWriter struct {
	w   io.Writer
	err error
}

func (t *textWriter) printf(format string, args ...any) {
	if t.err == nil {
		_, t.err = fmt.Fprintf(t.w, format, args...)
	}
}

func (t *textWriter) section(title string, n int) {
	t.printf("\n## %s (%d)\n\n", title, n)
	if n == 0 {
		t.printf("None.\n")
	}
}

func (t *textWriter) header(r *Report) {
	t.printf("# Runner report: %s\n\n", inert.Line(r.Repository))
	t.printf("%s\n\n", windowLine(r.Window))
	p := r.Progress
	t.printf("- **Progress:** %d of %d tasks done", p.Done, p.Total)
	if p.Blocked > 0 {
		t.printf(", %d blocked", p.Blocked)
	}
	if open := p.Total - p.Done - p.Blocked; open > 0 {
		t.printf(", %d open", open)
	}
	t.printf(".\n")
	if r.Tests != nil {
		t.printf("- **Tests:** %s.\n", inert.Line(strings.TrimPrefix(r.Tests.String(), "tests: ")))
	}
	for _, tt := range r.TaskTests {
		t.printf("  - `%s`, its checks: %s.\n", inert.Line(tt.Path), inert.Line(strings.TrimPrefix(tt.Tests.String(), "tests: ")))
	}
	if r.Branch != "" {
		at := "no task committed yet"
		if r.Checkpoint != "" {
			at = "at `" + shortID(r.Checkpoint) + "`"
		}
		t.printf("- **Branch:** `%s`, %s; review it with `git log -p %s`.\n", inert.Line(r.Branch), at, inert.Line(r.Branch))
	}
	switch run := r.Running; {
	case run != nil && run.Alive:
		t.printf("- **Now:** iteration %d on `%s` is under way (phase %s, since %s).\n", run.Iteration, inert.Line(run.Node),
			inert.Line(run.Phase), clock(run.StartedAt))
	case run != nil:
		t.printf("- **Now:** iteration %d on `%s` was left unfinished in phase %s; the next `runner run` resolves it.\n",
			run.Iteration, inert.Line(run.Node), inert.Line(run.Phase))
	default:
		t.printf("- **Now:** no iteration is under way.\n")
	}
	if r.Paused {
		t.printf("- **Paused:** no iteration starts until `runner resume`.\n")
	}
}

// windowLine says what the report covers.
func windowLine(w Window) string {
	var what string
	switch w.Kind {
	case KindIteration:
		what = fmt.Sprintf("Since iteration %d", w.FromIteration)
	case KindTime:
		what = "Since " + clock(*w.From)
	case KindNight:
		what = fmt.Sprintf("The last 24 hours: %d runs, from %s", w.Runs, clock(*w.From))
		if w.Runs == 1 {
			what = "The last 24 hours: 1 run, started " + clock(*w.From)
		}
	default:
		what = "The last run"
		if w.From != nil {
			what += ", started " + clock(*w.From)
		}
		if w.RunnerPID != 0 {
			what += fmt.Sprintf(" (pid %d)", w.RunnerPID)
		}
	}
	switch {
	case w.Iterations == 0:
		return what + ": no iteration."
	case w.First == w.Last:
		what += fmt.Sprintf(": iteration %d", w.First)
	default:
		what += fmt.Sprintf(": %d iterations, %d to %d", w.Iterations, w.First, w.Last)
	}
	if w.Until != nil {
		what += ", the last record at " + clock(*w.Until)
	}
	return what + "."
}

func (t *textWriter) blocked(r *Report) {
	t.section("Blocked: waiting for you", len(r.Blocked))
	for _, b := range r.Blocked {
		t.printf("- **%s**%s", inert.Line(b.Path), titled(b.Title))
		if b.Iteration > 0 {
			t.printf(" (iteration %d)", b.Iteration)
		}
		t.printf(": %s\n", orNone(inert.Line(oneLine(blockedHead(b))), "no reason given"))
		for _, q := range b.Questions {
			t.printf("  - %s\n", inert.Line(oneLine(q)))
		}
		if b.Reason == outcome.ReasonExhausted {
			t.printf("  - to go on: fix the cause, then `%s`; or `%s` to count it done without running it\n",
				inert.Line(b.Commands[0]), inert.Line(b.Commands[1]))
			continue
		}
		if outcome.IsCostCap(b.Reason) {
			t.printf("  - to go on: raise its cap (it reopens), or `%s` to give it its attempts and its budget again; or `%s` to count it done without running it\n",
				inert.Line(b.Commands[0]), inert.Line(b.Commands[1]))
			continue
		}
		t.printf("  - to go on: `%s` (it reopens the task, the answer in its prompt); or `%s` to count it done without running it\n",
			inert.Line(b.Commands[0]), inert.Line(b.Commands[1]))
	}
}

// blockedHead is the line that introduces a blocked task: its reason,
// or, when its questions follow (they are its reason), what the agent
// said of its work.
func blockedHead(b Blocked) string {
	if len(b.Questions) > 0 && b.Summary != "" {
		return b.Summary
	}
	return b.Reason
}

func (t *textWriter) done(r *Report) {
	t.section("Done", len(r.Done))
	for _, d := range r.Done {
		t.printf("- #%d **%s**%s", d.Iteration, inert.Line(d.Path), titled(d.Title))
		if d.Commit != "" {
			t.printf(": commit `%s`", shortID(d.Commit))
			if d.Diffstat != "" {
				t.printf(" (%s)", inert.Line(d.Diffstat))
			}
		}
		if d.Review == "skipped" {
			t.printf(", not reviewed")
		}
		if d.Rung != nil {
			t.printf(", %s", inert.Line(rungText(d.Executor, d.Rung)))
		}
		if d.Worker != "" {
			t.printf(", on worker %s", inert.Line(d.Worker))
		}
		t.printf("\n")
		if d.Summary != "" {
			t.printf("  %s\n", inert.Line(d.Summary))
		}
	}
}

func (t *textWriter) failed(r *Report) {
	t.section("Failed attempts", len(r.Failed))
	for _, f := range r.Failed {
		t.printf("- #%d **%s**", f.Iteration, inert.Line(f.Path))
		if f.Attempt > 0 && f.MaxAttempts > 0 {
			t.printf(", attempt %d of %d", f.Attempt, f.MaxAttempts)
		}
		if f.Rung != nil {
			t.printf(", %s", inert.Line(rungText(f.Executor, f.Rung)))
		}
		if f.Worker != "" {
			t.printf(", on worker %s", inert.Line(f.Worker))
		}
		t.printf(": %s", inert.Line(f.Reason))
		if f.AttemptRef != "" {
			t.printf(" — its changes: `git show %s`", inert.Line(f.AttemptRef))
		}
		t.printf("\n")
	}
}

func (t *textWriter) interrupted(r *Report) {
	t.section("Interrupted", len(r.Interrupted))
	for _, in := range r.Interrupted {
		what := map[string]string{Interrupted: "interrupted, an attempt spent", SetAside: "set aside, no attempt spent",
			Unfinished: "unfinished"}[in.Kind]
		switch {
		case in.Kind == Interrupted && !in.AttemptSpent && in.Worker != "":
			what = "interrupted on worker " + inert.Line(in.Worker) + ", no attempt spent"
		case in.Kind == Interrupted && !in.AttemptSpent:
			what = "interrupted by the runner's death, no attempt spent"
		}
		t.printf("- #%d **%s**: %s: %s\n", in.Iteration, inert.Line(in.Path), what, inert.Line(in.Reason))
	}
}

func (t *textWriter) decomposed(r *Report) {
	t.section("Split into subtasks", len(r.Decomposed))
	for _, s := range r.Decomposed {
		t.printf("- #%d **%s** into %s\n", s.Iteration, inert.Line(s.Path), inert.Line(strings.Join(s.Children, ", ")))
	}
}

func (t *textWriter) anomalies(r *Report) {
	t.section("Anomalies", len(r.Anomalies))
	for _, a := range r.Anomalies {
		t.printf("- ")
		if a.Iteration > 0 {
			t.printf("#%d ", a.Iteration)
		}
		t.printf("**%s** %s: %s\n", inert.Line(a.Path), strings.ReplaceAll(a.Kind, "_", " "), inert.Line(a.Detail))
	}
}

func (t *textWriter) usage(r *Report) {
	t.printf("\n## Cost and time\n\n")
	t.printf("- **These iterations:** %s\n", r.Usage.Total)
	for _, e := range r.Usage.Executors {
		t.printf("  - %s: %s, %d %s\n", orNone(inert.Line(e.Name), "(executor not recorded)"), e.Usage, e.Iterations, plural(e.Iterations, "iteration"))
	}
	if len(r.Usage.DoneByExecutor) > 0 {
		t.printf("- **Cost per done task** (all its attempts, by the executor that finished it):\n")
		for _, c := range r.Usage.DoneByExecutor {
			t.printf("  - %s: %d %s done, %s each (%s in all)\n", orNone(inert.Line(c.Executor), "(executor not recorded)"),
				c.Tasks, plural(c.Tasks, "task"), c.PerTask.Brief(), c.Usage.Brief())
		}
	}
	t.printf("- **All runs:** %s\n", r.Usage.AllRuns)
	if rl := r.RateLimits; rl.Waits > 0 {
		t.printf("- **Waiting on usage limits:** %s over %d %s\n", span(time.Duration(rl.WaitedMS)*time.Millisecond),
			rl.Waits, plural(rl.Waits, "wait"))
	} else {
		t.printf("- **Waiting on usage limits:** none\n")
	}
}

// clock is a time as the report shows it: local, to the minute.
func clock(t time.Time) string {
	return t.Local().Format("2006-01-02 15:04")
}

// span is a duration to the second, without the zero seconds of a
// longer one: 2h0m, 4m30s, 12s.
func span(d time.Duration) string {
	s := d.Round(time.Second).String()
	if d >= time.Minute {
		s = strings.TrimSuffix(s, "0s")
	}
	return s
}

func titled(title string) string {
	if title == "" {
		return ""
	}
	return " — " + inert.Line(oneLine(title))
}

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

func orNone(s, none string) string {
	if s == "" {
		return none
	}
	return s
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// suffix is sep and s, or "" when s is empty.
func suffix(sep, s string) string {
	if s == "" {
		return ""
	}
	return sep + s
}

// oneLine is the first non-empty line of s, its whitespace folded,
// bounded.
func oneLine(s string) string {
	for _, line := range strings.Split(textfmt.NormalizeNewlines(s), "\n") {
		if strings.TrimSpace(line) != "" {
			return textfmt.OneLine(line, 240)
		}
	}
	return ""
}

// diffSummary is the summary line of a diffstat ("2 files changed, 5
// insertions(+)"), or its last line.
func diffSummary(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for _, line := range lines {
		if strings.Contains(line, " changed") {
			return strings.TrimSpace(line)
		}
	}
	return strings.TrimSpace(lines[len(lines)-1])
}

// shortID is a commit id as people read it.
func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/status"
	"github.com/runner-cli/runner/internal/textfmt"
	"github.com/runner-cli/runner/internal/watch"
)

type statusOptions struct {
	JSON   bool
	Follow bool
}

// followRecheck is how often `runner status --follow` re-reads the state
// without being told that a file changed: it catches what change
// notifications cannot (a runner exiting releases its lock silently).
const followRecheck = 2 * time.Second

func newStatusCmd(g *globals) *cobra.Command {
	opts := &statusOptions{}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show progress, the tree with status marks, and the current or last iteration",
		Long: `Show progress (tasks done, blocked), the current iteration if a runner is
working, the last recorded iteration and its outcome, and the tree with status
marks: [x] done, [ ] open, [!] blocked, [>] next. Reads only; safe while a run
is going.

With --follow it keeps going, redrawing whenever the tree, the config or the
run state changes (and every few seconds as a fallback), until interrupted
(Ctrl-C ends it with exit status 0). On a terminal each rendering replaces the
previous one; otherwise each is printed after a "--- status at HH:MM:SS" line.
With --json --follow every rendering is one JSON object on one line. A file
that does not load (say, tree.json half edited) is shown as an error and
followed until it loads again.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runStatus(cmd.Context(), g, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print machine-readable JSON")
	cmd.Flags().BoolVar(&opts.Follow, "follow", false, "redraw whenever the state changes, until interrupted")
	return cmd
}

func runStatus(ctx context.Context, g *globals, opts *statusOptions) error {
	p, err := g.paths()
	if err != nil {
		return err
	}
	if opts.Follow {
		return followStatus(ctx, g, p, opts)
	}
	rep, err := status.Load(p)
	if err != nil {
		return err
	}
	if opts.JSON {
		return status.WriteJSON(g.streams.Out, rep)
	}
	printStatus(g.streams.Out, rep)
	return nil
}

// followStatus renders the status each time the files it is built from
// change, and every followRecheck, printing only renderings that differ
// from the previous one, until ctx ends.
func followStatus(ctx context.Context, g *globals, p state.Paths, opts *statusOptions) error {
	out := g.streams.Out
	tty := !opts.JSON && isTerminal(out)
	last := ""
	watch.Until(ctx, status.Inputs(p), watch.Wait{
		Recheck: followRecheck,
		Poll:    followRecheck,
		Options: watch.Options{OnError: func(err error) { g.logger.Warn("watching .runner for changes", "err", err) }},
		Unwatched: func(err error) {
			g.logger.Warn("cannot watch .runner for changes; redrawing every few seconds instead", "err", err)
		},
	}, func() bool {
		text := renderFollow(p, opts)
		if text == last {
			return false
		}
		last = text
		switch {
		case tty:
			fmt.Fprint(out, "\x1b[H\x1b[2J"+text) // home, clear screen
		case opts.JSON:
			fmt.Fprint(out, text)
		default:
			fmt.Fprintf(out, "--- status at %s\n%s", time.Now().Format("15:04:05"), text)
		}
		return false
	})
	return nil
}

// renderFollow is one rendering of --follow; a state that does not load
// renders as the error, to be redrawn once it loads again.
func renderFollow(p state.Paths, opts *statusOptions) string {
	rep, err := status.Load(p)
	var b bytes.Buffer
	switch {
	case err != nil && opts.JSON:
		data, _ := json.Marshal(map[string]string{"error": err.Error()})
		b.Write(append(data, '\n'))
	case err != nil:
		fmt.Fprintf(&b, "cannot show the status (shown again once this is fixed):\n%s\n", inert.Text(err.Error()))
	case opts.JSON:
		data, _ := json.Marshal(rep)
		b.Write(append(data, '\n'))
	default:
		printStatus(&b, rep)
	}
	return b.String()
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0 && os.Getenv("TERM") != "dumb"
}

// maxStatusLines bounds the tree outline printed by `runner status`.
const maxStatusLines = 400

func printStatus(w io.Writer, rep *status.Report) {
	fmt.Fprintf(w, "repository: %s\n", inert.Line(rep.Root))
	fmt.Fprintf(w, "progress:   %d of %d tasks done", rep.Progress.Done, rep.Progress.Total)
	if rep.Progress.Blocked > 0 {
		fmt.Fprintf(w, ", %d blocked", rep.Progress.Blocked)
	}
	fmt.Fprintln(w)
	if rep.Tests != nil {
		fmt.Fprintf(w, "%-11s %s\n", "tests:", inert.Line(strings.TrimPrefix(rep.Tests.String(), "tests: ")))
	}
	for _, s := range rep.Slots {
		verb := "running:"
		if !s.Alive {
			verb = "unfinished:"
		}
		on := ""
		if s.Worker != "" {
			on = ", on worker " + inert.Line(s.Worker)
		}
		fmt.Fprintf(w, "slot %-6d %s iteration %d on %s%s, phase %s, for %s%s\n", s.Slot, verb, s.Iteration, inert.Line(s.Node), on, inert.Line(s.Phase),
			time.Since(s.StartedAt).Round(time.Second), eventSuffix(s.Event))
	}
	if r := rep.Running; r != nil && len(rep.Slots) == 0 {
		if r.Alive {
			fmt.Fprintf(w, "running:    iteration %d on %s (phase %s, since %s, %s)%s\n", r.Iteration, inert.Line(r.Node), inert.Line(r.Phase),
				r.StartedAt.Local().Format("15:04:05"), inert.Line(r.Holder), eventSuffix(r.Event))
		} else {
			fmt.Fprintf(w, "unfinished: iteration %d on %s stopped in phase %s; the next `runner run` resolves it\n", r.Iteration, inert.Line(r.Node), inert.Line(r.Phase))
		}
	}
	if rep.Paused {
		if r := rep.Running; r != nil && r.Alive {
			fmt.Fprintf(w, "paused:     the runner finishes iteration %d, then holds until `runner resume`\n", r.Iteration)
		} else {
			fmt.Fprintln(w, "paused:     no iteration starts until `runner resume` (`runner stop` ends a held run)")
		}
	}
	if l := rep.Last; l != nil {
		outcome := l.Outcome
		if outcome == "" {
			outcome = l.AgentStatus
		}
		guard := "guards " + l.Guard
		switch l.Landing {
		case "conflict":
			guard += ", then a conflict with the run branch"
		case "guards":
			guard += ", then failing on the run branch"
		}
		switch {
		case l.NoChange && outcome == "done":
			outcome += ", but nothing changed"
		case l.CommandsFailed && outcome == "done":
			outcome += ", but every command the agent ran failed"
		}
		fmt.Fprintf(w, "last:       iteration %d on %s: agent %s, %s → %s\n", l.Iteration, inert.Line(l.Node), inert.Line(l.AgentStatus),
			inert.Line(guard), inert.Line(outcome))
		if r := l.Rung; r != nil {
			on := ""
			if l.Executor != "" && l.Executor != r.Executor {
				on = ", run on " + l.Executor + " (" + r.Executor + " was limited or set aside)"
			}
			fmt.Fprintf(w, "            its ladder: %s%s\n", inert.Line(r.String()), inert.Line(on))
		}
		if l.CostCap != nil {
			fmt.Fprintf(w, "            stopped at a spend cap: %s\n", inert.Line(l.CostCap.String()))
		}
		if s := firstLine(l.Summary); s != "" {
			fmt.Fprintf(w, "            %s\n", s)
		}
		if l.Unconfined != "" {
			fmt.Fprintf(w, "sandbox:    its agent was NOT confined: %s\n", inert.Line(l.Unconfined))
		}
		if l.Refused != "" {
			fmt.Fprintf(w, "refused:    %s\n", inert.Line(l.Refused))
		}
		for _, o := range l.Openings {
			fmt.Fprintf(w, "sandbox:    its room left open: %s\n", inert.Line(o))
		}
	} else {
		fmt.Fprintln(w, "last:       no iteration yet")
	}
	printExecutors(w, rep)
	if rep.Branch != "" {
		at := "no task committed yet"
		if rep.Checkpoint != "" {
			at = "last checkpoint " + shortID(rep.Checkpoint)
		}
		if f := rep.Finished; f != nil && f.BranchDeleted && f.Branch == rep.Branch {
			// Merged and deleted by runner finish: its work is on the base.
			fmt.Fprintf(w, "branch:     %s, merged into %s and deleted\n", inert.Line(rep.Branch), inert.Line(f.Base))
		} else {
			fmt.Fprintf(w, "branch:     %s, %s (`git log %s`)\n", inert.Line(rep.Branch), inert.Line(at), inert.Line(rep.Branch))
		}
	}
	printBase(w, rep)
	if rep.Next != "" {
		fmt.Fprintf(w, "next:       %s\n", inert.Line(rep.Next))
	}
	printNeedsYou(w, rep)
	fmt.Fprintln(w)
	lines := 0
	var pr func(n *status.TreeNode, depth int) bool
	pr = func(n *status.TreeNode, depth int) bool {
		if lines == maxStatusLines {
			fmt.Fprintln(w, "… (outline cut; `runner status --json` has the whole tree)")
			return false
		}
		lines++
		mark := map[string]string{"done": "[x]", "blocked": "[!]"}[n.Status]
		if mark == "" {
			mark = "[ ]"
		}
		if n.ID == rep.Next {
			mark = "[>]"
		}
		extra := ""
		if n.Attempts > 0 && len(n.Children) == 0 {
			extra = fmt.Sprintf(" (attempts %d/%d)", n.Attempts, n.MaxAttempts)
		}
		if len(n.Checks) > 0 {
			extra += " (checks: " + inert.Line(strings.Join(n.Checks, ", ")) + ")"
		}
		if n.Tests != nil {
			extra += " — " + inert.Line(n.Tests.String())
		}
		if n.Spent != nil {
			extra += " (spent " + n.Spent.Brief() + ")"
		}
		if n.BlockedReason != "" {
			extra += " — blocked: " + inert.Line(n.BlockedReason)
		}
		fmt.Fprintf(w, "%s%s %s  %s%s\n", strings.Repeat("  ", depth), mark, inert.Line(n.ID), inert.Line(n.Title), extra)
		for _, c := range n.Children {
			if !pr(c, depth+1) {
				return false
			}
		}
		return true
	}
	pr(rep.Tree, 0)
}

// printExecutors says which executor is in use, which are set aside or
// limited and why, and the usage in total and, with more than one
// executor, by executor.
func printExecutors(w io.Writer, rep *status.Report) {
	if rep.Executor != "" {
		fmt.Fprintf(w, "executor:   %s\n", inert.Line(rep.Executor))
	}
	if rep.Reviewer != "" {
		fmt.Fprintf(w, "reviewer:   %s\n", inert.Line(rep.Reviewer))
	}
	if rep.Engine != "" {
		fmt.Fprintf(w, "engine:     %s (the iterations run on `runner worker`s)\n", inert.Line(rep.Engine))
		if rep.EngineUnprotected != "" {
			fmt.Fprintf(w, "            NOT PROTECTED: %s\n", inert.Line(rep.EngineUnprotected))
		}
	}
	for _, n := range rep.SetAside {
		fmt.Fprintf(w, "set aside:  %s for the rest of the run: %s\n", inert.Line(n.Name), firstLine(n.Reason))
	}
	for _, n := range rep.Limited {
		fmt.Fprintf(w, "limited:    %s until %s: %s\n", inert.Line(n.Name), n.Until.Local().Format("15:04:05"), firstLine(n.Reason))
	}
	defer printCaps(w, rep.Caps)
	if rep.Usage.IsZero() {
		return
	}
	fmt.Fprintf(w, "usage:      %s (all runs)\n", rep.Usage)
	if len(rep.UsageByExecutor) < 2 {
		return
	}
	names := make([]string, 0, len(rep.UsageByExecutor))
	for name := range rep.UsageByExecutor {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "            %s: %s\n", inert.Line(name), rep.UsageByExecutor[name])
	}
}

// printCaps says what is left of each spend cap (SPEC §24).
func printCaps(w io.Writer, caps []status.CapUse) {
	for i, c := range caps {
		head := "caps:"
		if i > 0 {
			head = ""
		}
		what := "the run"
		if c.Scope == state.ScopeTask {
			what = "each task"
		}
		used := state.Amount(c.Unit, c.Used) + " spent"
		if c.Scope == state.ScopeTask {
			used = "the most a task not done has spent: " + state.Amount(c.Unit, c.Used)
		}
		if !c.Known {
			used = "cost unknown: set executor.price"
		}
		fmt.Fprintf(w, "%-11s %s %s (%s), %s\n", head, what, state.Amount(c.Unit, c.Cap.Cap), inert.Line(c.Key), used)
	}
}

// firstLine is the first line of s, cut to about 160 bytes, with control
// characters escaped.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	more := ""
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s, more = s[:i], " …"
	}
	if len(s) > 160 {
		cut := 157
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s, more = s[:cut], "…"
	}
	return inert.Line(s) + more
}

// shortID is a commit id as people read it.
func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// eventSuffix is ": EVENT" for an agent's latest event, "" for none.
func eventSuffix(event string) string {
	if event == "" {
		return ""
	}
	return ": " + inert.Line(textfmt.OneLine(event, 160))
}

// printBase says how far the base is ahead of the run branch, and how
// `runner finish` ended the run (SPEC §23).
func printBase(w io.Writer, rep *status.Report) {
	if f := rep.Finished; f != nil {
		what := map[string]string{
			state.FinishedMerged:    "merged into " + inert.Line(f.Base),
			state.FinishedPR:        "pull request opened: " + inert.Line(f.URL),
			state.FinishedPushed:    "pushed; open its pull request" + where(f.URL),
			state.FinishedAbandoned: "abandoned, the run branch kept",
		}[f.How]
		if f.How == state.FinishedMerged && f.Commit != "" {
			what += " at " + shortID(f.Commit)
		}
		if f.BranchDeleted {
			what += ", the run branch deleted"
		} else if f.How == state.FinishedMerged {
			what += ", the run branch kept"
		}
		if f.WorktreesRemoved {
			what += ", its worktrees removed"
		}
		fmt.Fprintf(w, "finished:   the run is finished: %s (%s); `runner run` starts again\n", what, f.At.Local().Format(time.DateTime))
		return
	}
	if rep.BaseAhead > 0 {
		n := fmt.Sprintf("%d commits", rep.BaseAhead)
		if rep.BaseAhead == 1 {
			n = "1 commit"
		}
		fmt.Fprintf(w, "base:       %s is %s ahead of %s (`runner finish` brings the run onto it)\n",
			inert.Line(rep.Base), n, inert.Line(rep.Branch))
	}
}

// where is " at URL", or "" without one.
func where(url string) string {
	if url == "" {
		return ""
	}
	return " at " + inert.Line(url)
}

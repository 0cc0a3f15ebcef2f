package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/plan"
	"github.com/runner-cli/runner/internal/room"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

type planOptions struct {
	Node   string
	Force  bool
	DryRun bool
}

func newPlanCmd(g *globals) *cobra.Command {
	opts := &planOptions{}
	cmd := &cobra.Command{
		Use:   "plan [--node ID] DOC...",
		Short: "Have the agent turn documents (a PRD, a spec, an issue) into the task tree, or split one task",
		Long: `Run the configured agent once to turn documents into the task tree: files in
the repository, or - to read one from stdin. The agent gets a fixed planning
contract, the documents (scrubbed of secrets; they must fit prompt.budget, and
are never cut) and the current tree's outline, and answers with its final
message: status "decomposed" and the tasks as children, which may nest.

The runner, not the agent, writes .runner/tree.json: the plan is validated as
tree.json is (ids, uniqueness, dependencies, cycles), every problem named at
once, and an invalid plan changes nothing. A tree with progress (tasks done,
blocked, or with attempts spent) is replaced only with --force. A replaced tree
is kept as .runner/tree.json.bak.N (N the plan's iteration), and the output
names it. A tree.json that changed while the agent planned is not written over.

With --node ID the agent decomposes one open task instead: its subtasks are
added under it, and the rest of the tree is left as it is (documents are then
optional). With --dry-run the plan is checked and shown, and only kept in the
run folder (.runner/runs/N/plan.json).

A plan is recorded like an iteration: it takes the lock (never beside
"runner run"), an iteration number and a run folder ("runner show N"), counts
its usage, and waits out rate limits; the journal gets a "plan" record.

EXIT STATUS
  0    the plan was written (or, with --dry-run, is valid)
  1    error: bad input, documents over the budget, the lock held, a tree with
       progress without --force, the agent failed or could not plan, an
       invalid plan
  130  interrupted`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPlan(cmd.Context(), g, opts, args)
		},
	}
	cmd.Flags().StringVar(&opts.Node, "node", "", "decompose the open task with this id instead of planning the whole tree")
	cmd.RegisterFlagCompletionFunc("node", func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return taskIDs(g, toComplete), cobra.ShellCompDirectiveNoFileComp
	})
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace a tree that has progress (the current one is kept as tree.json.bak.N)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "check and show the plan without writing tree.json")
	return cmd
}

func runPlan(ctx context.Context, g *globals, opts *planOptions, args []string) error {
	p, err := g.paths()
	if err != nil {
		return err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	docs, err := plan.ReadDocuments(p.Root, cwd, args, g.streams.In)
	if err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	g.superviseChildren()
	res, err := plan.Run(ctx, plan.Options{
		Paths: p, Documents: docs, Node: opts.Node, Force: opts.Force, DryRun: opts.DryRun,
		Progress: g.streams.Err, Log: g.logger.WithPrefix("plan"), Room: room.For,
	})
	if res != nil {
		printPlan(g.streams.Out, p, res)
	}
	if err != nil && ctx.Err() != nil {
		return &ExitError{Code: ExitInterrupted, Err: err}
	}
	return err
}

// printPlan shows what a planning run made: the plan's outline, the
// agent's summary, assumptions and questions, and what was written.
func printPlan(w io.Writer, p state.Paths, res *plan.Result) {
	if res.Planned != nil {
		fmt.Fprintf(w, "plan (iteration %d): %s\n", res.Iteration, plural(res.Tasks, "task"))
		lines := 0
		printOutline(w, res.Planned, 0, &lines)
	}
	if m := res.Message; m != nil {
		fmt.Fprintf(w, "summary:  %s\n", indentRest(m.Summary))
		for _, a := range m.Assumptions {
			fmt.Fprintf(w, "assumed:  %s\n", indentRest(a))
		}
		for _, q := range m.Questions {
			fmt.Fprintf(w, "question: %s\n", indentRest(q))
		}
	}
	treeFile := rel(p, p.Tree())
	switch {
	case res.Written() && res.Backup != "":
		fmt.Fprintf(w, "wrote %s; the tree it replaced is kept as %s\n", treeFile, inert.Line(res.Backup))
	case res.Written() && res.Node != "":
		fmt.Fprintf(w, "wrote %s: %s added under %s\n", treeFile, plural(res.Tasks, "task"), inert.Line(res.Node))
	case res.Written():
		fmt.Fprintf(w, "wrote %s\n", treeFile)
	case res.Outcome == state.OutcomePlanDryRun:
		fmt.Fprintf(w, "dry run: %s is unchanged; the plan is in %s\n", treeFile, inert.Line(res.Proposal))
		return
	default:
		return
	}
	fmt.Fprintln(w, "review it with `runner status` and `runner prompt` (the first task's prompt), then `runner run`")
}

// maxPlanLines bounds the outline printPlan prints.
const maxPlanLines = 400

// printOutline prints n and the tasks under it, one per line, indented
// by depth, with the tasks each depends on.
func printOutline(w io.Writer, n *tree.Node, depth int, lines *int) bool {
	if *lines == maxPlanLines {
		fmt.Fprintf(w, "… (outline cut at %d lines; `runner status --json` has the whole tree)\n", maxPlanLines)
		return false
	}
	*lines++
	mark := map[tree.Status]string{tree.StatusDone: "[x]", tree.StatusBlocked: "[!]"}[n.Status]
	if mark == "" {
		mark = "[ ]"
	}
	after := ""
	if len(n.DependsOn) > 0 {
		after = "  (after " + strings.Join(inert.Lines(n.DependsOn), ", ") + ")"
	}
	fmt.Fprintf(w, "%s%s %s  %s%s\n", strings.Repeat("  ", depth), mark, inert.Line(n.ID), inert.Line(n.Title), after)
	for _, c := range n.Children {
		if !printOutline(w, c, depth+1, lines) {
			return false
		}
	}
	return true
}

// printPlanHeader is `runner show`'s first line for a planning run.
func printPlanHeader(w io.Writer, m *state.Meta) {
	docs := make([]string, 0, len(m.Plan.Documents))
	for _, d := range m.Plan.Documents {
		docs = append(docs, inert.Line(d.Name))
	}
	what := "plan of the whole tree"
	if m.Plan.Node != "" {
		what = "plan: decompose " + inert.Line(m.NodePath)
	}
	if len(docs) > 0 {
		what += " from " + strings.Join(docs, ", ")
	}
	fmt.Fprintf(w, "iteration %d — %s\n", m.Iteration, what)
}

// printPlanMeta is what `runner show` says a planning run made.
func printPlanMeta(w io.Writer, m *state.Meta) {
	pm := m.Plan
	if m.Outcome != "" {
		fmt.Fprintf(w, "outcome:  %s", inert.Line(m.Outcome))
		if pm.Tasks > 0 {
			fmt.Fprintf(w, ", %s", plural(pm.Tasks, "task"))
		}
		if pm.DryRun {
			fmt.Fprint(w, " (--dry-run)")
		}
		fmt.Fprintln(w)
	}
	for _, pr := range pm.Problems {
		fmt.Fprintf(w, "problem:  %s\n", indentRest(pr))
	}
	if pm.Proposal != "" {
		fmt.Fprintf(w, "plan:     %s in the run folder\n", inert.Line(pm.Proposal))
	}
	if pm.Backup != "" {
		fmt.Fprintf(w, "backup:   the tree it replaced is kept as %s\n", inert.Line(pm.Backup))
	}
}

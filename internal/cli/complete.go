package cli

import (
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// Shell completion of what the commands name: task ids (from tree.json,
// with their titles), iteration numbers (from the run folders) and
// presets. What cannot be read completes nothing.

// completeTasks completes a task id, as the first argument only.
func completeTasks(g *globals) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return taskIDs(g, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// taskIDs are the ids of tree.json's tasks starting with prefix, each
// with its title as the description.
func taskIDs(g *globals, prefix string) []cobra.Completion {
	p, err := g.paths()
	if err != nil {
		return nil
	}
	t, err := tree.Load(p.Tree())
	if err != nil {
		return nil
	}
	var out []cobra.Completion
	t.Walk(func(n *tree.Node) {
		if strings.HasPrefix(n.ID, prefix) {
			out = append(out, cobra.CompletionWithDesc(n.ID, n.Title))
		}
	})
	return out
}

// completeIterations completes an iteration number, the newest first.
func completeIterations(g *globals) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		p, err := g.paths()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		entries, err := os.ReadDir(p.RunsDir())
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var ns []int
		for _, e := range entries {
			if n, err := strconv.Atoi(e.Name()); err == nil && n > 0 && e.IsDir() {
				ns = append(ns, n)
			}
		}
		sort.Sort(sort.Reverse(sort.IntSlice(ns)))
		var out []cobra.Completion
		for _, n := range ns {
			if s := strconv.Itoa(n); strings.HasPrefix(s, toComplete) {
				desc := ""
				if m, err := state.LoadMeta(p.RunDir(n)); err == nil && m != nil {
					desc = strings.TrimSpace(m.NodePath + " " + m.Outcome)
				}
				out = append(out, cobra.CompletionWithDesc(s, desc))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
	}
}

// completePresets completes a preset's name.
func completePresets(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return []cobra.Completion{config.PresetCodex, config.PresetClaude, config.PresetCommand}, cobra.ShellCompDirectiveNoFileComp
}

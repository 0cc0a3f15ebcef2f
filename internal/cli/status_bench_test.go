package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// benchHistoryRepo creates a repository as a long run leaves it: a tree of
// 1,000 nodes, and runs iterations recorded, each with its run folder
// (meta.json, prompt.md, context.json, executor.log), four journal
// records and the run state pointing at the last one.
func benchHistoryRepo(b *testing.B, runs int) state.Paths {
	b.Helper()
	p := state.NewPaths(b.TempDir())
	for _, dir := range []string{p.StateDir(), p.RunsDir()} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	nodes := make([]*tree.Node, 1000)
	for i := range nodes {
		nodes[i] = &tree.Node{ID: fmt.Sprintf("n%d", i), Title: fmt.Sprintf("Node %d of the generated tree", i),
			Goal: "Implement this part of the system and its tests.", Acceptance: []string{"go test ./... passes"}}
		if i > 0 {
			p := nodes[(i-1)/10]
			p.Children = append(p.Children, nodes[i])
		}
	}
	t := &tree.Tree{Version: tree.Version, Root: nodes[0]}
	done := 0
	for _, n := range nodes {
		if n.IsLeaf() && done < runs/2 {
			n.Status = tree.StatusDone
			done++
		}
	}
	t.Normalize()
	must := func(err error) {
		b.Helper()
		if err != nil {
			b.Fatal(err)
		}
	}
	must(os.WriteFile(p.Tree(), tree.Marshal(t), 0o644))
	must(os.WriteFile(p.Config(), []byte("[executor]\npreset = \"command\"\ncommand = [\"true\"]\n"), 0o644))
	prompt := strings.Repeat("A line of the prompt that the agent was sent for this iteration.\n", 300)
	var journal strings.Builder
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rs := &state.RunState{Version: state.RunStateVersion}
	for n := 1; n <= runs; n++ {
		dir := p.RunDir(n)
		must(os.MkdirAll(dir, 0o755))
		node := nodes[1+n%999].ID
		finished := start.Add(time.Duration(n) * time.Minute)
		m := &state.Meta{Iteration: n, Node: node, NodePath: node, Attempt: 1, MaxAttempts: 3, Phase: state.PhaseRecorded,
			StartedAt: finished.Add(-50 * time.Second), FinishedAt: &finished, DurationMS: 50_000,
			Prompt: state.PromptMeta{Bytes: len(prompt), Budget: 40960}, AgentStatus: "done", Summary: "did the work",
			Guard: state.GuardPass, Outcome: state.OutcomeDone, NodeStatus: "done"}
		must(state.SaveMetaAs(dir, m, fsutil.NotSynced))
		must(os.WriteFile(dir+"/prompt.md", []byte(prompt), 0o644))
		must(os.WriteFile(dir+"/context.json", []byte(`{"injection_id": "INJ-20260101-000000-abcdef"}`+"\n"), 0o644))
		must(os.WriteFile(dir+"/executor.log", []byte(`{"status": "done", "summary": "did the work"}`+"\n"), 0o644))
		for _, ev := range []string{state.EventStarted, state.EventAgentDone, state.EventGuardsDone, state.EventRecorded} {
			fmt.Fprintf(&journal, `{"time":%q,"iteration":%d,"node":%q,"event":%q,"outcome":"done","summary":"did the work"}`+"\n",
				finished.Format(time.RFC3339), n, node, ev)
		}
		rs.Iteration, rs.LastNode, rs.LastStatus, rs.LastGuard, rs.LastSummary = n, node, "done", state.GuardPass, "did the work"
	}
	must(os.WriteFile(p.Journal(), []byte(journal.String()), 0o644))
	must(state.SaveRunState(p.RunState(), rs))
	return p
}

// BenchmarkStatusHistory runs `runner status` (text and --json) and
// `runner show` through the command line, after no iteration and after
// 2,000: their cost must not grow with the history.
func BenchmarkStatusHistory(b *testing.B) {
	for _, runs := range []int{0, 2000} {
		p := benchHistoryRepo(b, runs)
		for _, args := range [][]string{{"status"}, {"status", "--json"}, {"show"}} {
			if runs == 0 && args[0] == "show" {
				continue // nothing to show yet
			}
			b.Run(fmt.Sprintf("runs=%d/%s", runs, strings.Join(args, "_")), func(b *testing.B) {
				argv := append([]string{"--dir", p.Root}, args...)
				b.ReportAllocs()
				for b.Loop() {
					if code := Execute(context.Background(), argv, Streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}); code != 0 {
						b.Fatalf("runner %v: exit %d", args, code)
					}
				}
			})
		}
	}
}

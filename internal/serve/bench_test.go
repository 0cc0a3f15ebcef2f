package serve

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/state"
)

// benchRepo is a repository after runs iterations, each with its run
// folder (meta.json, prompt.md, an executor.log of logBytes), four
// journal records, and a tree of 1,000 tasks.
func benchRepo(b *testing.B, runs, logBytes int) state.Paths {
	b.Helper()
	p := state.NewPaths(b.TempDir())
	must := func(err error) {
		b.Helper()
		if err != nil {
			b.Fatal(err)
		}
	}
	must(os.MkdirAll(p.StateDir(), 0o755))
	var tree strings.Builder
	tree.WriteString(`{"version": 1, "root": {"id": "big", "title": "Big tree", "children": [`)
	for i := range 1000 {
		if i > 0 {
			tree.WriteString(",")
		}
		status := ""
		if i < runs/2 {
			status = `, "status": "done"`
		}
		fmt.Fprintf(&tree, `{"id": "t%d", "title": "Task number %d with a longish title"%s}`, i, i, status)
	}
	tree.WriteString("]}}\n")
	must(os.WriteFile(p.Tree(), []byte(tree.String()), 0o644))
	must(os.WriteFile(p.Config(), []byte("[executor]\npreset = \"command\"\ncommand = [\"true\"]\n"), 0o644))
	prompt := strings.Repeat("A line of the prompt that the agent was sent for this iteration.\n", 300)
	log := strings.Repeat("a line the agent printed while it worked on the task\n", logBytes/53+1)
	var journal strings.Builder
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rs := &state.RunState{Version: state.RunStateVersion}
	for n := 1; n <= runs; n++ {
		dir := p.RunDir(n)
		must(os.MkdirAll(dir, 0o755))
		node := fmt.Sprintf("t%d", n%1000)
		finished := start.Add(time.Duration(n) * time.Minute)
		must(state.SaveMetaAs(dir, &state.Meta{Iteration: n, Node: node, NodePath: "big/" + node, Attempt: 1, MaxAttempts: 3,
			Phase: state.PhaseRecorded, StartedAt: finished.Add(-50 * time.Second), FinishedAt: &finished, DurationMS: 50_000,
			Prompt: state.PromptMeta{Bytes: len(prompt), Budget: 40960}, AgentStatus: "done", Summary: "did the work",
			Guard: state.GuardPass, Outcome: state.OutcomeDone, NodeStatus: "done",
			Usage: &state.Usage{InputTokens: 40000, OutputTokens: 2000, CostUSD: 0.12, CostSource: state.CostReported}}, fsutil.NotSynced))
		must(os.WriteFile(filepath.Join(dir, "prompt.md"), []byte(prompt), 0o644))
		must(os.WriteFile(filepath.Join(dir, "executor.log"), []byte(log), 0o644))
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

// BenchmarkDashboard measures each request of the page after 2,000
// iterations whose executor.log is 1 MiB, and the look at the state the
// event stream makes on each change: none may grow with the history.
func BenchmarkDashboard(b *testing.B) {
	p := benchRepo(b, 2000, 1<<20)
	s, err := New(Options{Paths: p})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	for _, path := range []string{"/api/status", "/api/iterations", "/api/iterations/1000", "/api/notes"} {
		b.Run(strings.TrimPrefix(path, "/api/"), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				resp, err := http.Get(ts.URL + path)
				if err != nil {
					b.Fatal(err)
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("GET %s: %d", path, resp.StatusCode)
				}
				b.ReportMetric(float64(n), "bytes/op")
			}
		})
	}
	b.Run("event-check", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.stamp()
		}
	})
}

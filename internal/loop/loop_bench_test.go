package loop

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// The end-to-end benchmark of BENCHMARKS.md: iterations of the loop on a
// 1,000-node tree with a no-op agent (bench/noopagent), no guards, and a
// prompt of about 20 KB, measured against a bare shell loop that pipes a
// prompt file of the same size into the same agent the same number of
// times. Run it with
//
//	go test ./internal/loop -run '^$' -bench Iteration -benchtime 300x
//
// ns/op is the wall time of one iteration of the loop; shell-ns/op that of
// one turn of the shell loop; overhead-ns/op the difference, which is
// everything the runner adds to starting the agent.

// benchTreeNodes is the size of the benchmark's tree.
const benchTreeNodes = 1000

// buildNoopAgent builds bench/noopagent into dir and returns its path.
func buildNoopAgent(b *testing.B, dir string) string {
	b.Helper()
	bin := filepath.Join(dir, "noopagent")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/runner-cli/runner/bench/noopagent")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build the no-op agent: %v\n%s", err, out)
	}
	return bin
}

// benchTree is the tree of bench/gentree: node i > 0 below node (i-1)/10,
// each depending on its previous sibling, all open.
func benchTree(n int) *tree.Tree {
	nodes := make([]*tree.Node, n)
	for i := range n {
		nodes[i] = &tree.Node{ID: fmt.Sprintf("n%d", i), Title: fmt.Sprintf("Node %d of the generated tree", i),
			Goal: fmt.Sprintf("Implement part %d of the system and its tests.", i), Acceptance: []string{"go test ./... passes"}}
		if i > 0 {
			p := nodes[(i-1)/10]
			if len(p.Children) > 0 {
				nodes[i].DependsOn = []string{p.Children[len(p.Children)-1].ID}
			}
			p.Children = append(p.Children, nodes[i])
		}
	}
	return &tree.Tree{Version: tree.Version, Root: nodes[0]}
}

// benchAssumptions is about 10 KB of notes, which with the tree summary
// and the fixed sections makes a prompt of about 20 KB.
func benchAssumptions() string {
	var s strings.Builder
	s.WriteString("# Assumptions\n\n")
	for i := 0; s.Len() < 10_000; i++ {
		fmt.Fprintf(&s, "- [iteration %d, node n%d] assumption number %d about the project and its layout\n", i, i, i)
	}
	return s.String()
}

// newBenchRepo creates a repository for the benchmark: config, tree and
// notes, with agent as the executor.
func newBenchRepo(b *testing.B, agent, extraConfig string) state.Paths {
	b.Helper()
	p := state.NewPaths(b.TempDir())
	if err := os.MkdirAll(p.StateDir(), 0o755); err != nil {
		b.Fatal(err)
	}
	cfg := fmt.Sprintf("[executor]\npreset = \"command\"\ncommand = [%q]\n\n[loop]\nmax_iterations = 1000000\n%s", agent, extraConfig)
	for path, content := range map[string]string{
		p.Config():      cfg,
		p.Tree():        string(tree.Marshal(benchTree(benchTreeNodes))),
		p.Assumptions(): benchAssumptions(),
	} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return p
}

// reopenAll marks every node of the repository's tree open again, so that
// the loop can go on for more iterations than the tree has leaves.
func reopenAll(b *testing.B, p state.Paths) {
	b.Helper()
	if err := os.WriteFile(p.Tree(), tree.Marshal(benchTree(benchTreeNodes)), 0o644); err != nil {
		b.Fatal(err)
	}
}

// runIterations runs the loop for n iterations in batches that fit the
// tree, reopening the tree between batches with the timer stopped.
func runIterations(b *testing.B, p state.Paths, n int) {
	b.Helper()
	const batch = 500 // fewer than the tree's leaves
	for done := 0; done < n; {
		k := min(batch, n-done)
		res, err := Run(context.Background(), Options{Paths: p, MaxIterations: k})
		if err != nil {
			b.Fatal(err)
		}
		if res.Iterations != k {
			b.Fatalf("ran %d iterations, want %d: %s", res.Iterations, k, res.Message)
		}
		done += k
		if done < n {
			b.StopTimer()
			reopenAll(b, p)
			b.StartTimer()
		}
	}
}

// shellLoop times sh running agent n times with prompt on its stdin.
func shellLoop(b *testing.B, agent, prompt string, n int) time.Duration {
	b.Helper()
	script := `i=0; while [ "$i" -lt "$1" ]; do "$2" < "$3" > /dev/null || exit 1; i=$((i+1)); done`
	cmd := exec.Command("sh", "-c", script, "sh", strconv.Itoa(n), agent, prompt)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("shell loop: %v\n%s", err, out.String())
	}
	return time.Since(start)
}

func BenchmarkIteration(b *testing.B) {
	agent := buildNoopAgent(b, b.TempDir())
	for _, tc := range []struct{ name, config string }{
		{"nodes=1000", ""},
		{"nodes=1000/keep_runs=50", "keep_runs = 50\n"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			p := newBenchRepo(b, agent, tc.config)
			// One iteration outside the measurement gives the prompt file
			// the shell loop sends.
			runIterations(b, p, 1)
			data, err := os.ReadFile(filepath.Join(p.RunDir(1), "prompt.md"))
			if err != nil {
				b.Fatal(err)
			}
			prompt := filepath.Join(b.TempDir(), "prompt.md")
			if err := os.WriteFile(prompt, data, 0o644); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			start := time.Now()
			runIterations(b, p, b.N)
			b.StopTimer()
			runner := time.Since(start)
			shell := shellLoop(b, agent, prompt, b.N)
			perIter := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) }
			b.ReportMetric(perIter(shell), "shell-ns/op")
			b.ReportMetric(perIter(runner)-perIter(shell), "overhead-ns/op")
			b.ReportMetric(float64(len(data)), "prompt-bytes")
		})
	}
}

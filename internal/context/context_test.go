package contextfiles

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/tree"
)

func authNode() *tree.Node {
	return &tree.Node{
		ID:    "auth",
		Title: "Implement user authentication",
		Goal:  "Add JWT-based auth to the API",
		Acceptance: []string{
			"POST /login returns JWT token",
			"Protected routes require valid token",
			"Token expires after 24 hours",
		},
	}
}

func TestRenderGoalMatchesSeedExample(t *testing.T) {
	f, err := Render(authNode(), Previous{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := "# Goal\n\ntitle: Implement user authentication\ngoal: Add JWT-based auth to the API\nacceptance:\n- POST /login returns JWT token\n- Protected routes require valid token\n- Token expires after 24 hours\n"
	if f.Goal != want {
		t.Errorf("goal.md:\n%q\nwant\n%q", f.Goal, want)
	}
	if f.History != "" || f.Failure != "" {
		t.Errorf("history %q failure %q without a previous iteration", f.History, f.Failure)
	}
}

func TestRenderGoalMultiLine(t *testing.T) {
	n := &tree.Node{
		ID:         "ops",
		Title:      "Operations",
		Goal:       "Implement + - * /.\r\n\r\nDivision by zero:\n  exit 2  \n",
		Acceptance: []string{"go test ./ops\npasses"},
	}
	f, err := Render(n, Previous{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := "# Goal\n\ntitle: Operations\ngoal: Implement + - * /.\n\n  Division by zero:\n    exit 2\nacceptance:\n- go test ./ops\n  passes\n"
	if f.Goal != want {
		t.Errorf("goal.md:\n%s\nwant\n%s", f.Goal, want)
	}

	f, err = Render(&tree.Node{ID: "x", Title: "X"}, Previous{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := "# Goal\n\ntitle: X\ngoal:\nacceptance: (none)\n"; f.Goal != want {
		t.Errorf("goal.md without goal and acceptance:\n%q\nwant %q", f.Goal, want)
	}
}

func writeRun(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "runs", "000007")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestRenderHistory(t *testing.T) {
	tests := []struct {
		name, node, status string
		want               bool
	}{
		{"retry same node", "auth", "retry", true},
		{"executor error same node", "auth", "error", true},
		{"interrupted same node", "auth", "interrupted", true},
		{"done same node", "auth", "done", false},
		{"blocked same node", "auth", "blocked", false},
		{"decomposed same node", "auth", "decomposed", false},
		{"retry other node", "billing", "retry", false},
		{"error other node", "billing", "error", false},
		{"no previous node", "", "retry", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prev := Previous{Iteration: 7, Node: tt.node, Status: tt.status, Summary: "agent exited with status 2: boom", Guard: "skipped"}
			f, err := Render(authNode(), prev, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.want {
				if f.History != "" {
					t.Errorf("history.md written: %q", f.History)
				}
				return
			}
			if !strings.HasPrefix(f.History, "# History (previous attempt)\n\nagent exited with status 2: boom\n") {
				t.Errorf("history.md = %q", f.History)
			}
			interrupted := strings.Contains(f.History, "working tree may hold partial changes")
			if interrupted != (tt.status == "interrupted") {
				t.Errorf("interrupted note present = %v for status %s", interrupted, tt.status)
			}
		})
	}
}

func TestRenderHistoryWithoutSummary(t *testing.T) {
	f, err := Render(authNode(), Previous{Iteration: 3, Node: "auth", Status: "interrupted"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.History, "Iteration 3 was interrupted.") || !strings.Contains(f.History, InterruptedNote) {
		t.Errorf("history.md = %q", f.History)
	}
}

func TestRenderHistoryBounded(t *testing.T) {
	prev := Previous{Iteration: 3, Node: "auth", Status: "retry", Summary: strings.Repeat("älpha beta\n", 1000)}
	f, err := Render(authNode(), prev, 1000)
	if err != nil {
		t.Fatal(err)
	}
	body := strings.TrimPrefix(f.History, HistoryHeading+"\n\n")
	if len(body) > 1001 || !utf8.ValidString(body) || !strings.Contains(body, "more bytes cut") {
		t.Errorf("history body %d bytes, valid %v:\n%s", len(body), utf8.ValidString(body), body[max(0, len(body)-80):])
	}
}

func TestRenderFailure(t *testing.T) {
	tests := []struct {
		name  string
		node  string
		guard string
		files map[string]string
		want  string // "" = no failure.md
	}{
		{"failure.log", "auth", "fail", map[string]string{"failure.log": "FAIL auth_test.go:3\n", "guard.log": "all output\n"}, "FAIL auth_test.go:3\n"},
		{"fallback to guard.log", "auth", "fail", map[string]string{"guard.log": "all output\n"}, "all output\n"},
		{"empty failure.log falls back", "auth", "fail", map[string]string{"failure.log": "", "guard.log": "all output\n"}, "all output\n"},
		{"guard passed", "auth", "pass", map[string]string{"failure.log": "old\n"}, ""},
		{"guard skipped", "auth", "skipped", map[string]string{"failure.log": "old\n"}, ""},
		{"other node", "billing", "fail", map[string]string{"failure.log": "billing broke\n"}, ""},
		{"no logs", "auth", "fail", nil, "failure.log and guard.log in "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeRun(t, tt.files)
			prev := Previous{Iteration: 7, Node: tt.node, Status: "done", Guard: tt.guard, RunDir: dir}
			f, err := Render(authNode(), prev, 0)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				if f.Failure != "" {
					t.Errorf("failure.md written: %q", f.Failure)
				}
				return
			}
			if !strings.HasPrefix(f.Failure, FailureHeading+"\n\n") || !strings.Contains(f.Failure, tt.want) {
				t.Errorf("failure.md = %q, want it to hold %q", f.Failure, tt.want)
			}
			if f.History != "" {
				t.Errorf("history.md written after done: %q", f.History)
			}
		})
	}
}

func TestRenderFailureKeepsBoundedTail(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 100_000; i++ {
		b.WriteString("ok   line with ünïcødé 😀 ")
		b.WriteString(strings.Repeat("x", i%50))
		b.WriteString("\n")
	}
	b.WriteString("--- FAIL: TestLogin (0.01s)\n    auth_test.go:42: got 401\n")
	b.WriteString("\xff\xfe bad bytes\n") // invalid UTF-8 from a tool
	log := b.String()
	for _, limit := range []int64{300, 1000, 4096, 16 << 10} {
		dir := writeRun(t, map[string]string{"failure.log": log})
		f, err := Render(authNode(), Previous{Iteration: 7, Node: "auth", Guard: "fail", RunDir: dir}, limit)
		if err != nil {
			t.Fatal(err)
		}
		body := strings.TrimPrefix(f.Failure, FailureHeading+"\n\n")
		if int64(len(body)) > limit+1 { // +1: the final newline
			t.Errorf("limit %d: body is %d bytes", limit, len(body))
		}
		if !utf8.ValidString(body) {
			t.Errorf("limit %d: invalid UTF-8", limit)
		}
		first, rest, _ := strings.Cut(body, "\n")
		if !strings.HasPrefix(first, "[... ") || !strings.Contains(first, "bytes cut from the start of failure.log") {
			t.Errorf("limit %d: first line %q does not say what was cut", limit, first)
		}
		if !strings.Contains(rest, "auth_test.go:42: got 401") {
			t.Errorf("limit %d: the end of the log is missing:\n%s", limit, rest)
		}
		if !strings.HasPrefix(rest, "ok   line") && !strings.HasPrefix(rest, "--- FAIL") {
			t.Errorf("limit %d: tail does not start at a line: %q", limit, rest[:min(40, len(rest))])
		}
	}
}

func TestRenderFailureUnreadableLog(t *testing.T) {
	dir := writeRun(t, nil)
	if err := os.Mkdir(filepath.Join(dir, "failure.log"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Render(authNode(), Previous{Iteration: 7, Node: "auth", Guard: "fail", RunDir: dir}, 0)
	if err == nil || !strings.Contains(err.Error(), "failure.log") {
		t.Errorf("err = %v, want an error naming failure.log", err)
	}
}

func TestRenderNothingFromAnotherNode(t *testing.T) {
	dir := writeRun(t, map[string]string{"failure.log": "SECRET-OTHER-NODE\n", "guard.log": "SECRET-OTHER-NODE\n"})
	for _, status := range []string{"retry", "error", "interrupted", "done"} {
		prev := Previous{Iteration: 9, Node: "billing", Status: status, Summary: "SECRET-OTHER-NODE", Guard: "fail", RunDir: dir}
		f, err := Render(authNode(), prev, 0)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(f.Goal+f.History+f.Failure, "SECRET-OTHER-NODE") || f.History != "" || f.Failure != "" {
			t.Errorf("status %s: another node leaked in: %+v", status, f)
		}
	}
}

func TestWriteRemovesStaleFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".runner", "context")
	if err := Write(dir, Files{Goal: "# Goal\n\nA\n", History: "# History (previous attempt)\n\nh\n", Failure: "# Failure (previous attempt)\n\nf\n"}); err != nil {
		t.Fatal(err)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"failure.md", "goal.md", "history.md"}) {
		t.Fatalf("after first write: %v", got)
	}
	// Leftovers of any kind disappear.
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("stale"), 0o644)
	os.MkdirAll(filepath.Join(dir, "sub", "deeper"), 0o755)
	if err := Write(dir, Files{Goal: "# Goal\n\nB\n"}); err != nil {
		t.Fatal(err)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"goal.md"}) {
		t.Errorf("after second write: %v, want only goal.md", got)
	}
	data, err := os.ReadFile(filepath.Join(dir, "goal.md"))
	if err != nil || string(data) != "# Goal\n\nB\n" {
		t.Errorf("goal.md = %q, %v", data, err)
	}
}

func TestWriteErrors(t *testing.T) {
	if err := Write("", Files{Goal: "x"}); err == nil {
		t.Error("no error for an empty directory name")
	}
	file := filepath.Join(t.TempDir(), "context")
	os.WriteFile(file, []byte("not a directory"), 0o644)
	if err := Write(file, Files{Goal: "x"}); err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("err = %v, want an error naming %s", err, file)
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func TestRenderFailureCutsAtRuneBoundary(t *testing.T) {
	// One long line of 3-byte runes: no newline to cut at.
	dir := writeRun(t, map[string]string{"failure.log": strings.Repeat("€", 10_000)})
	for _, limit := range []int64{500, 501, 502} {
		f, err := Render(authNode(), Previous{Iteration: 7, Node: "auth", Guard: "fail", RunDir: dir}, limit)
		if err != nil {
			t.Fatal(err)
		}
		_, rest, _ := strings.Cut(strings.TrimPrefix(f.Failure, FailureHeading+"\n\n"), "\n")
		if strings.ContainsRune(rest, utf8.RuneError) || !strings.HasPrefix(rest, "€") {
			t.Errorf("limit %d: tail starts inside a rune: %q", limit, rest[:min(12, len(rest))])
		}
	}
}

// TestWriteStaysInside is the agent's attack on context/: it replaced the
// folder with a link to a folder outside the repository, or hard-linked
// goal.md to a file outside, or left links inside it. Writing the context
// files changes nothing outside, and context/ ends up a real folder with
// the files of the iteration.
func TestWriteStaysInside(t *testing.T) {
	setup := map[string]func(t *testing.T, ctx, outside string){
		"context/ linked outside": func(t *testing.T, ctx, outside string) {
			must(t, os.Symlink(outside, ctx))
		},
		"goal.md hard-linked outside": func(t *testing.T, ctx, outside string) {
			must(t, os.Mkdir(ctx, 0o755))
			must(t, os.Link(filepath.Join(outside, "bashrc"), filepath.Join(ctx, "goal.md")))
		},
		"links inside": func(t *testing.T, ctx, outside string) {
			must(t, os.MkdirAll(filepath.Join(ctx, "deep"), 0o755))
			must(t, os.Symlink(outside, filepath.Join(ctx, "deep", "out")))
			must(t, os.Symlink(filepath.Join(outside, "bashrc"), filepath.Join(ctx, "history.md")))
			must(t, os.Symlink(outside, filepath.Join(ctx, "failure.md")))
		},
	}
	for name, attack := range setup {
		t.Run(name, func(t *testing.T) {
			base := t.TempDir()
			runner := filepath.Join(base, "repo", ".runner")
			outside := filepath.Join(base, "outside")
			must(t, os.MkdirAll(runner, 0o755))
			must(t, os.MkdirAll(outside, 0o755))
			must(t, os.WriteFile(filepath.Join(outside, "bashrc"), []byte("keep\n"), 0o644))
			ctx := filepath.Join(runner, "context")
			attack(t, ctx, outside)
			must(t, fsutil.Confine(runner))
			defer fsutil.Release(runner)

			if err := Write(ctx, Files{Goal: "# Goal\n\nNew\n", History: "# History\n"}); err != nil {
				t.Fatal(err)
			}
			if got, err := os.ReadFile(filepath.Join(outside, "bashrc")); err != nil || string(got) != "keep\n" {
				t.Errorf("the file outside holds %q (%v), want it unchanged", got, err)
			}
			if got := names(t, outside); !slices.Equal(got, []string{"bashrc"}) {
				t.Errorf("the folder outside holds %v, want only bashrc", got)
			}
			if st, err := os.Lstat(ctx); err != nil || !st.IsDir() {
				t.Fatalf("context/ is %v (%v), want a real folder", st.Mode(), err)
			}
			if got := names(t, ctx); !slices.Equal(got, []string{"goal.md", "history.md"}) {
				t.Errorf("context/ holds %v", got)
			}
			if got, _ := os.ReadFile(filepath.Join(ctx, "goal.md")); string(got) != "# Goal\n\nNew\n" {
				t.Errorf("goal.md = %q", got)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestRenderWithinAncestors: goal.md says, after the task's own goal, the
// goal and acceptance of each group above it that has them, the root
// first; one too long is cut, and of too many the nearest are kept.
func TestRenderWithinAncestors(t *testing.T) {
	node := &tree.Node{ID: "ops", Title: "Operations", Goal: "Implement + - * /."}
	ancestors := []Ancestor{
		{Path: "calc", Title: "Calculator CLI", Goal: "A calculator. Do not change the tests.", Acceptance: []string{"go test ./... passes"}},
		{Path: "calc/core", Title: "Core"}, // nothing to say
	}
	f, err := RenderWithin(node, ancestors, nil, Previous{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := "# Goal\n\ntitle: Operations\ngoal: Implement + - * /.\nacceptance: (none)\n" +
		"\n## Within\n\nThis task is part of the groups below (the whole tree first); what they ask for holds for it too.\n" +
		"\n### calc: Calculator CLI\n\ngoal: A calculator. Do not change the tests.\nacceptance:\n- go test ./... passes\n"
	if f.Goal != want {
		t.Fatalf("goal.md:\n%s\nwant:\n%s", f.Goal, want)
	}
	if f, _ := RenderWithin(node, ancestors[1:], nil, Previous{}, 0); strings.Contains(f.Goal, "Within") {
		t.Errorf("a group with nothing to say makes a Within part:\n%s", f.Goal)
	}

	long := []Ancestor{{Path: "a", Title: "A", Goal: strings.Repeat("é", 5000)}}
	f, _ = RenderWithin(node, long, nil, Previous{}, 0)
	within := f.Goal[strings.Index(f.Goal, "\n### a"):]
	if len(within) > ancestorLimit || !strings.HasSuffix(within, "[truncated]\n") || !utf8.ValidString(within) {
		t.Errorf("a long ancestor: %d bytes (limit %d), ends %q", len(within), ancestorLimit, within[len(within)-20:])
	}
	var many []Ancestor
	for i := range 20 {
		many = append(many, Ancestor{Path: fmt.Sprintf("g%d", i), Title: "G", Goal: strings.Repeat("x", 1500)})
	}
	f, _ = RenderWithin(node, many, nil, Previous{}, 0)
	if !strings.Contains(f.Goal, "### g19:") || strings.Contains(f.Goal, "### g0:") || len(f.Goal) > ancestorsLimit+1024 {
		t.Errorf("many ancestors: %d bytes; want the nearest kept within %d", len(f.Goal), ancestorsLimit)
	}
}

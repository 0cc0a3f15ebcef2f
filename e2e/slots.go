package e2e

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/tree"
)

// AddNight adds to the crash repository's config a fallback executor
// (the crash agent, without usage limits) and a reviewer (the crash agent
// as reviewer), both with the agent's environment plus agentEnv.
func (r *Repo) AddNight(agentEnv []string) {
	r.T.Helper()
	exe, err := os.Executable()
	if err != nil {
		r.T.Fatal(err)
	}
	env := fmt.Sprintf("%s = \"1\", %s = %s, %s = %s, %s", CrashAgentEnv, CrashTokenEnv, TomlString(r.Token), CrashLogEnv, TomlString(r.Log), strings.Join(agentEnv, ", "))
	config, err := os.ReadFile(filepath.Join(r.Root, ".runner/config.toml"))
	if err != nil {
		r.T.Fatal(err)
	}
	r.Write(".runner/config.toml", strings.Replace(string(config), "[executor]\n", "[executor]\nname = \"primary\"\n", 1)+fmt.Sprintf(`
[[fallback]]
name = "backup"
preset = "command"
command = [%[1]s]
timeout = "60s"
kill_grace = "500ms"
env = { %[2]s }

[review]
name = "reviewer"
preset = "command"
command = [%[1]s]
timeout = "60s"
kill_grace = "500ms"
max_rejections = 100000
env = { %[2]s, %[3]s = "1" }
`, TomlString(exe), env, CrashReviewerEnv))
}

// WhyExited describes a runner that exited with an error where it should
// have finished: its exit code, the git lock files a killed runner's git
// left behind (the runner clears those no git holds), the processes
// holding the lock file, the seed that replays the test's choices, and
// the runner's output.
func (r *Repo) WhyExited(res RunnerResult, seed uint64) string {
	var locks []string
	filepath.WalkDir(filepath.Join(r.Root, ".git"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".lock") {
			rel, _ := filepath.Rel(r.Root, path)
			locks = append(locks, rel)
		}
		return nil
	})
	lockNote := "none"
	if len(locks) > 0 {
		lockNote = strings.Join(locks, ", ") + " (left by the git of a killed runner: the runner does not clear them)"
	}
	return fmt.Sprintf("exit %d\ngit lock files: %s\nprocesses with the runner's lock file open: %s\nseed %d (RUNNER_CRASH_SEED=%d replays the test's choices, not the timing of the kills)\noutput:\n%s",
		res.Code, lockNote, LockHolders(r.Paths.Lock()), seed, seed, res.Out)
}

// TaskGuard passes when the task's own file is there: the guards of a
// task that run in another slot's worktree fail.
const TaskGuard = `
[[guard]]
name = "task-file"
run = "test -f \"work/$RUNNER_NODE_ID.txt\""
timeout = "30s"
`

// FlatTree returns a tree of n independent tasks: leaves of the root,
// none depending on another; the ids of the first shared end in "-s"
// (crashSharedEnv).
func FlatTree(prefix string, n, shared int) string {
	type node struct {
		ID       string  `json:"id"`
		Title    string  `json:"title"`
		Goal     string  `json:"goal,omitempty"`
		Children []*node `json:"children,omitempty"`
	}
	root := &node{ID: prefix, Title: "Crash test " + prefix}
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("%s-%03d", prefix, i)
		if i >= n-shared {
			id += "-s"
		}
		root.Children = append(root.Children, &node{ID: id, Title: fmt.Sprintf("Task %d", i), Goal: "Append a line to work/ID.txt."})
	}
	data, _ := json.MarshalIndent(map[string]any{"version": 1, "root": root}, "", "  ")
	return string(data) + "\n"
}

// AddFlatTasks adds the tasks of flatTree to the repository's tree, as a
// person would while no runner runs.
func AddFlatTasks(t *testing.T, r *Repo, prefix string, n, shared int) {
	t.Helper()
	tr, err := tree.Load(r.Paths.Tree())
	if err != nil {
		t.Fatal(err)
	}
	more, err := tree.Parse("more.json", []byte(FlatTree(prefix, n, shared)))
	if err != nil {
		t.Fatal(err)
	}
	tr.Root.Children = append(tr.Root.Children, more.Root.Children...)
	if err := tree.Save(r.Paths.Tree(), tr); err != nil {
		t.Fatal(err)
	}
}

// Package demo builds the self-contained demonstration `runner demo` runs:
// a scratch git repository with a three-task tree, real guard commands,
// and a scripted agent played by the runner binary itself. The agent makes
// a mistake on its first attempt so that the demo shows a guard failure,
// a retry that reads failure.md, a retry that reads history.md, and success.
package demo

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/state"
)

// AgentCommand is the hidden subcommand under which the runner binary
// plays the demo's agent.
const AgentCommand = "demo-agent"

const treeJSON = `{
  "version": 1,
  "root": {
    "id": "greeter",
    "title": "Greeting files",
    "goal": "A greeting and a farewell, checked by check.sh.",
    "children": [
      {
        "id": "hello",
        "title": "Write hello.txt",
        "goal": "Create hello.txt holding the line \"Hello, world!\".",
        "acceptance": ["sh check.sh passes", "hello.txt is exactly one line"]
      },
      {
        "id": "goodbye",
        "title": "Write goodbye.txt",
        "goal": "Create goodbye.txt with a farewell and a signature line.",
        "acceptance": ["sh check.sh passes", "the last line is \"-- the runner demo\""],
        "depends_on": ["hello"]
      },
      {
        "id": "notes",
        "title": "Write NOTES.md",
        "goal": "Describe the two files in NOTES.md.",
        "depends_on": ["goodbye"]
      }
    ]
  }
}
`

const checkSh = `#!/bin/sh
# The demo's guard: every file that exists must be right.
status=0
if [ -f hello.txt ] && ! grep -qx 'Hello, world!' hello.txt; then
  echo "check.sh: hello.txt must hold the line 'Hello, world!' but holds: $(cat hello.txt)"
  status=1
fi
if [ -f goodbye.txt ] && [ "$(tail -n 1 goodbye.txt)" != "-- the runner demo" ]; then
  echo "check.sh: the last line of goodbye.txt must be '-- the runner demo'"
  status=1
fi
[ $status -eq 0 ] && echo "check.sh: all files are right"
exit $status
`

// Setup creates the demo repository in dir: a git repository (when git is
// installed) with check.sh and a .runner/ whose config runs self as the
// agent. It returns the repository's paths.
func Setup(dir, self string) (state.Paths, error) {
	p := state.NewPaths(dir)
	for _, d := range []string{p.Dir, p.StateDir(), p.RunsDir(), p.ContextDir()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return p, err
		}
	}
	config := fmt.Sprintf(`# The runner demo: the runner binary plays a scripted agent.
[executor]
preset = "command"
command = [%q, %q]
timeout = "1m"

[[guard]]
name = "check"
run = "sh check.sh"
timeout = "30s"

[[guard]]
name = "no-todo"
run = "! grep -n TODO *.txt *.md 2>/dev/null"
timeout = "30s"

[loop]
max_iterations = 20
max_attempts = 3
`, self, AgentCommand)
	files := map[string]string{
		filepath.Join(dir, "check.sh"):     checkSh,
		filepath.Join(dir, "README.md"):    "# runner demo\n\nA scratch repository made by `runner demo`.\n",
		p.Config():                         config,
		p.Tree():                           treeJSON,
		filepath.Join(p.Dir, ".gitignore"): "context/\nruns/\nlock\n",
	}
	for path, content := range files {
		if err := fsutil.WriteFileAtomic(path, []byte(content), 0o644); err != nil {
			return p, err
		}
	}
	if git, err := exec.LookPath("git"); err == nil {
		for _, args := range [][]string{
			{"init", "-q"},
			{"add", "."},
			{"-c", "user.name=runner demo", "-c", "user.email=demo@localhost", "commit", "-q", "-m", "demo repository"},
		} {
			cmd := exec.Command(git, args...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				return p, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
			}
		}
	}
	return p, nil
}

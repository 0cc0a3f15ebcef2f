package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// InWorktreeConfined makes the repository's runs work as runs do by
// default, in the run branch's worktree, with the agent and the guards
// confined (sandbox.mode = "required"); the crash agent's log folder is
// writable.
func (r *Repo) InWorktreeConfined() {
	r.T.Helper()
	path := filepath.Join(r.Root, ".runner/config.toml")
	data, err := os.ReadFile(path)
	if err != nil {
		r.T.Fatal(err)
	}
	config := strings.Replace(string(data), "[git]\nworktree = false\n", "[git]\nworktree = true\n", 1)
	config += fmt.Sprintf("\n[sandbox]\nmode = \"required\"\nwritable = [%s]\n", TomlString(r.Log))
	r.Write(".runner/config.toml", config)
	r.Namespaces = true
}

// Worktree returns the linked Worktree that holds branch.
func (r *Repo) Worktree(branch string) string {
	r.T.Helper()
	var dir string
	for _, line := range strings.Split(r.Git("worktree", "list", "--porcelain"), "\n") {
		if p, ok := strings.CutPrefix(line, "worktree "); ok {
			dir = p
		}
		if line == "branch refs/heads/"+branch {
			return dir
		}
	}
	r.T.Fatalf("no worktree holds %s", branch)
	return ""
}

// Git runs Git in the repository and returns its output; a failure fails
// the test.
func (r *Repo) Git(args ...string) string {
	r.T.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.Root
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		r.T.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	return strings.TrimSpace(string(out))
}

// GitIn runs git in dir and returns its combined output.
func GitIn(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

package git

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestResetWorktreeKeepsIgnoredAndRuntimeFiles(t *testing.T) {
	s := newScratch(t)
	// The person committed a state file (state/ is not ignored by
	// .runner/.gitignore): the runner changes it afterwards, and a reset
	// must not put the committed version back.
	s.write(".runner/state/assumptions.md", "committed by the person\n")
	s.write("tracked.txt", "tracked\n")
	s.write("gone.txt", "deleted by the attempt\n")
	s.git("add", "-A")
	s.git("commit", "-q", "-m", "checkpoint")
	checkpoint := s.git("rev-parse", "HEAD")

	// The runner's files, written while the attempt ran.
	s.write(".runner/state/run_state.json", "{\"iteration\":7}\n")
	s.write(".runner/state/assumptions.md", "appended by the runner\n")
	s.write(".runner/runs/000007/meta.json", "{}\n")
	s.write(".runner/context/goal.md", "goal\n")
	s.write(".runner/lock", "pid 1\n")
	// The attempt's work.
	s.write("tracked.txt", "changed by the attempt\n")
	os.Remove(filepath.Join(s.dir, "gone.txt"))
	s.write("new/dir/file.go", "package dir\n")
	s.write("README", "staged change\n")
	s.git("add", "README")
	s.write(".runner/state/staged.json", "{}\n")
	s.git("add", ".runner/state/staged.json") // an agent's git add -A
	// Ignored files: dependencies and build outputs.
	s.write("build/app", "binary\n")
	s.write("node.log", "log\n")
	s.write("new/dir/trace.log", "ignored, in a folder the attempt made\n")

	if err := s.r.ResetWorktree(ctx, checkpoint, runtime); err != nil {
		t.Fatal(err)
	}
	s.wantFiles(map[string]string{
		"tracked.txt":                   "tracked\n",
		"gone.txt":                      "deleted by the attempt\n",
		"README":                        "hello\n",
		"new/dir/file.go":               "<missing>",
		"build/app":                     "binary\n",
		"node.log":                      "log\n",
		"new/dir/trace.log":             "ignored, in a folder the attempt made\n",
		".runner/state/run_state.json":  "{\"iteration\":7}\n",
		".runner/state/assumptions.md":  "appended by the runner\n",
		".runner/state/staged.json":     "{}\n",
		".runner/runs/000007/meta.json": "{}\n",
		".runner/context/goal.md":       "goal\n",
		".runner/lock":                  "pid 1\n",
	})
	if cs, err := s.r.Changes(ctx, runtime); err != nil || len(cs) != 0 {
		t.Errorf("Changes after the reset = %q, %v; want none", paths(cs), err)
	}
	if staged := s.git("diff", "--cached", "--name-only", "HEAD"); staged != "" {
		t.Errorf("the index differs from the checkpoint: %s", staged)
	}
	if got := s.git("rev-parse", "HEAD"); got != checkpoint {
		t.Errorf("HEAD moved to %s", got)
	}
	s.noTempIndexes()
	s.fsck()
}

// The reset after a failed attempt goes back to the checkpoint, not to
// where an agent's commit took HEAD; the caller moves the branch.
func TestResetWorktreeAfterAnAgentCommit(t *testing.T) {
	s := newScratch(t)
	checkpoint := s.git("rev-parse", "HEAD")
	s.write("agent.go", "package agent\n")
	s.git("add", "-A")
	s.git("commit", "-q", "-m", "the agent's commit")
	agent := s.git("rev-parse", "HEAD")
	s.write("more.go", "package more\n")

	if err := s.r.ResetWorktree(ctx, checkpoint, runtime); err != nil {
		t.Fatal(err)
	}
	if s.read("agent.go") != "<missing>" || s.read("more.go") != "<missing>" {
		t.Errorf("the attempt's files are still there")
	}
	if err := s.r.UpdateRef(ctx, "HEAD", checkpoint, agent); err != nil {
		t.Fatal(err)
	}
	if cs, err := s.r.Changes(ctx, runtime); err != nil || len(cs) != 0 {
		t.Errorf("Changes after the reset = %q, %v; want none", paths(cs), err)
	}
}

func TestResetWorktreeOfACleanTree(t *testing.T) {
	s := newScratch(t)
	head := s.git("rev-parse", "HEAD")
	s.write("build/out", "kept\n")
	if err := s.r.ResetWorktree(ctx, head, runtime); err != nil {
		t.Fatal(err)
	}
	if got := s.read("build/out"); got != "kept\n" {
		t.Errorf("build/out = %q", got)
	}
	files, _ := os.ReadDir(s.dir)
	var names []string
	for _, f := range files {
		names = append(names, f.Name())
	}
	if want := []string{".git", ".gitignore", ".runner", "README", "build"}; !slices.Equal(names, want) {
		t.Errorf("files = %q, want %q", names, want)
	}
}

package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBaselineFindsKeepsAndRestores(t *testing.T) {
	root := t.TempDir()
	rd := filepath.Join(root, ".runner")
	write(t, filepath.Join(rd, "config.toml"), "guard\n")
	write(t, filepath.Join(rd, "tree.json"), "{}\n")
	write(t, filepath.Join(rd, "state", "journal.jsonl"), "line\n")
	write(t, filepath.Join(rd, "state", "run_state.json"), "{}\n")
	write(t, filepath.Join(root, "tests", "a_test.go"), "package a\n")
	write(t, filepath.Join(root, "tests", "gone_test.go"), "package a\n")
	write(t, filepath.Join(root, "main.go"), "package main\n")
	globs, err := ParseGlobs([]string{"tests/**"})
	if err != nil {
		t.Fatal(err)
	}
	j := Judged{Root: root, RunnerDir: rd, Inputs: true, SkipState: []string{"run_state.json", "stop"}, Protect: globs}
	b, err := Take(j)
	if err != nil {
		t.Fatal(err)
	}

	// What an agent might do: its own work, then the judges.
	write(t, filepath.Join(root, "main.go"), "package main // work\n")
	write(t, filepath.Join(rd, "state", "run_state.json"), `{"forged": true}`)
	write(t, filepath.Join(rd, "state", "stop"), "")
	write(t, filepath.Join(rd, "config.toml"), "true\n")
	write(t, filepath.Join(rd, "state", "journal.jsonl"), "line\nforged\n")
	write(t, filepath.Join(root, "tests", "a_test.go"), "package a // gamed\n")
	write(t, filepath.Join(root, "tests", "new_test.go"), "package a\n")
	os.Remove(filepath.Join(root, "tests", "gone_test.go"))
	os.Remove(filepath.Join(rd, "tree.json"))
	if err := os.Symlink("/etc/passwd", filepath.Join(rd, "tree.json")); err != nil {
		t.Fatal(err)
	}

	changes, err := b.Check()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range changes {
		got = append(got, c.Kind+" "+c.Rel)
	}
	want := []string{"modified .runner/config.toml", "modified .runner/state/journal.jsonl", "modified .runner/tree.json",
		"modified tests/a_test.go", "deleted tests/gone_test.go", "added tests/new_test.go"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	keep := t.TempDir()
	kept, err := b.Keep(changes, keep)
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(keep, kept[0])); string(data) != "true\n" {
		t.Errorf("kept config.toml = %q, want the agent's version", data)
	}
	if kept[4] != "" {
		t.Errorf("a deletion kept %q, want nothing", kept[4])
	}
	if err := b.Restore(changes); err != nil {
		t.Fatal(err)
	}
	if again, err := b.Check(); err != nil || len(again) != 0 {
		t.Fatalf("after Restore: %v %v", again, err)
	}
	if fi, err := os.Lstat(filepath.Join(rd, "tree.json")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("tree.json is not a file again: %v %v", fi, err)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "main.go")); string(data) != "package main // work\n" {
		t.Errorf("the agent's own work was touched: %q", data)
	}
}

func TestBaselineWithoutInputs(t *testing.T) {
	root := t.TempDir()
	rd := filepath.Join(t.TempDir(), ".runner") // beside a worktree
	write(t, filepath.Join(rd, "config.toml"), "a\n")
	b, err := Take(Judged{Root: root, RunnerDir: rd})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(rd, "config.toml"), "a person's edit\n")
	if changes, err := b.Check(); err != nil || len(changes) != 0 {
		t.Fatalf("an input outside the agent's tree was judged: %v %v", changes, err)
	}
}

// TestBaselineJudgesGitFiles: the repository's git configuration and a
// worktree's .git file, judged where the agent is not confined: an
// fsmonitor set in the config and a .git file pointed elsewhere are
// found, kept under their names, and put back.
func TestBaselineJudgesGitFiles(t *testing.T) {
	root := t.TempDir()
	gitConfig := filepath.Join(root, "repo", ".git", "config")
	attrs := filepath.Join(root, "repo", ".git", "info", "attributes")
	dotGit := filepath.Join(root, "wt", ".git")
	write(t, gitConfig, "[core]\n\tbare = false\n")
	write(t, dotGit, "gitdir: /repo/.git/worktrees/wt\n")
	j := Judged{Root: filepath.Join(root, "wt"), Files: []File{{gitConfig, ".git/config"}, {attrs, ".git/info/attributes"}, {dotGit, "worktree/.git"}}}
	b, err := Take(j)
	if err != nil {
		t.Fatal(err)
	}
	write(t, gitConfig, "[core]\n\tbare = false\n\tfsmonitor = /tmp/evil.sh\n")
	write(t, attrs, "* filter=evil\n")
	write(t, dotGit, "gitdir: /tmp/fake-git\n")
	changes, err := b.Check()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range changes {
		got = append(got, c.Kind+" "+c.Rel)
	}
	want := []string{"modified .git/config", "added .git/info/attributes", "modified worktree/.git"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Fatalf("changes %v; want %v", got, want)
	}
	kept := t.TempDir()
	if _, err := b.Keep(changes, kept); err != nil {
		t.Fatal(err)
	}
	if err := b.Restore(changes); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(gitConfig); strings.Contains(string(data), "fsmonitor") {
		t.Errorf("the git config was not put back: %q", data)
	}
	if _, err := os.Stat(attrs); !os.IsNotExist(err) {
		t.Errorf("the added attributes file is still there: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(kept, ".git", "config")); !strings.Contains(string(data), "fsmonitor") {
		t.Errorf("the agent's git config was not kept: %q", data)
	}
}

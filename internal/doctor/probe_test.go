package doctor

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestRepoState asks a real git about a folder outside any repository,
// a repository without a commit and one with a commit.
func TestRepoState(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git:", err)
	}
	dir := t.TempDir()
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	t.Setenv("GIT_DIR", "/nonexistent") // the runner's own environment does not point git elsewhere
	ctx := context.Background()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(git, args...)
		cmd.Dir = dir
		cmd.Env = gitEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if got := repoState(ctx, git, dir, 5*time.Second); got.Kind != RepoNone {
		t.Errorf("outside a repository: %+v", got)
	}
	run("init", "-q")
	if got := repoState(ctx, git, dir, 5*time.Second); got.Kind != RepoUnborn {
		t.Errorf("no commit yet: %+v", got)
	}
	run("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "first")
	if got := repoState(ctx, git, dir, 5*time.Second); got.Kind != RepoOK {
		t.Errorf("with a commit: %+v", got)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := repoState(ctx, git, sub, 5*time.Second); got.Kind != RepoOK {
		t.Errorf("in a folder of it: %+v", got)
	}
	if got := repoState(ctx, git, filepath.Join(dir, ".git"), 5*time.Second); got.Kind != RepoNone {
		t.Errorf("inside .git: %+v", got)
	}
}

// TestRunBoundedParentDone: a command whose context ends early stops.
func TestRunBoundedParentDone(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep:", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err = runBounded(ctx, time.Minute, "", nil, sleep, "30")
	if err == nil || time.Since(start) > 5*time.Second {
		t.Errorf("err %v after %s", err, time.Since(start))
	}
}

func TestFirstLine(t *testing.T) {
	for in, want := range map[string]string{
		"":                   "",
		"\n  \n v1.2 \nmore": "v1.2",
		"x\r\n":              "x",
	} {
		if got := firstLine([]byte(in)); got != want {
			t.Errorf("firstLine(%q) = %q, want %q", in, got, want)
		}
	}
	long := make([]byte, 300)
	for i := range long {
		long[i] = 'a'
	}
	if got := firstLine(long); len(got) != 200+len("…") {
		t.Errorf("a long line is %d bytes", len(got))
	}
}

package room

import (
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/engine"
	"github.com/runner-cli/runner/internal/sandbox"
)

// Every room hides the engine key this machine names, whether or not
// this process read it (`runner plan`'s, git.setup's, a worker's rooms).
func TestRoomForHidesTheKey(t *testing.T) {
	if abi, err := sandbox.ABI(); abi < 1 {
		t.Skipf("no Landlock here: %v", err)
	}
	t.Setenv(engine.KeyEnv, "/etc/runner/engine.key")
	cfg := &config.Config{}
	cfg.Sandbox.Mode = config.SandboxAuto
	room := For(cfg, t.TempDir(), t.TempDir())
	if room == nil || !slices.Contains(room.Hidden, "/etc/runner/engine.key") {
		t.Fatalf("the room %+v does not hide the key RUNNER_ENGINE_KEY_FILE names", room)
	}
	t.Setenv(engine.KeyEnv, "")
	cfg.Engine.KeyFile = "/srv/runner/engine.key"
	if room := For(cfg, t.TempDir(), t.TempDir()); !slices.Contains(room.Hidden, "/srv/runner/engine.key") {
		t.Errorf("the room %+v does not hide engine.key_file", room)
	}
}

// TestOpeningWritable: a writable directory that holds the checkout, or
// its git directory, opens the room ([sandbox] writable or
// RUNNER_SANDBOX_WRITABLE); one beside them does not.
func TestOpeningWritable(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	base := t.TempDir()
	main, wt, beside := filepath.Join(base, "src", "app"), filepath.Join(base, "wt", "app"), filepath.Join(base, "src", "app2")
	for _, args := range [][]string{
		{"init", "-q", main},
		{"-C", main, "-c", "user.name=P", "-c", "user.email=p@example.com", "commit", "-q", "--allow-empty", "-m", "init"},
		{"-C", main, "worktree", "add", "-q", "--detach", wt},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	t.Setenv(WritableEnv, "")
	cfg := &config.Config{}
	for _, c := range []struct {
		writable []string
		env      string
		root     string
		want     string
	}{
		{[]string{beside, filepath.Join(base, "src")}, "", main, filepath.Join(base, "src")},
		{[]string{beside}, "", main, ""},
		{nil, beside + string(filepath.ListSeparator) + main, main, main},
		// A linked worktree's git directory is the checkout's.
		{[]string{main}, "", wt, main},
		{[]string{filepath.Join(base, "wt")}, "", wt, filepath.Join(base, "wt")},
	} {
		cfg.Sandbox.Writable = c.writable
		t.Setenv(WritableEnv, c.env)
		if got := OpeningWritable(cfg, c.root); got != c.want {
			t.Errorf("OpeningWritable(writable %q, env %q, root %s) = %q, want %q", c.writable, c.env, c.root, got, c.want)
		}
	}
}

package git

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A repository whose configuration sends the remote elsewhere (an
// url.<base>.insteadOf or pushInsteadOf naming an ext:: command, as an
// agent that could write it would set), or runs a program on the way
// (core.sshCommand, a credential helper, core.gitProxy): the runner's
// fetch, push and ls-remote reach the remote the run names, and run
// nothing. An ext:: or fd:: remote is refused outright, and so is one
// that the person's global configuration would rewrite to ext::.
func TestRemoteIgnoresTheRepositorysConfig(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where the transport directories are made
	s := newScratch(t)
	remote := filepath.Join(t.TempDir(), "remote.git")
	s.git("init", "-q", "--bare", remote)
	marker := filepath.Join(t.TempDir(), "ran")
	evil := "ext::sh -c touch% " + marker
	for _, kv := range [][2]string{
		{"url." + evil + ".insteadOf", remote},
		{"url." + evil + ".pushInsteadOf", remote},
		{"url." + evil + ".insteadOf", ""},
		{"core.sshCommand", "touch " + marker},
		{"core.gitProxy", "touch " + marker},
		{"credential.helper", "!touch " + marker},
	} {
		s.git("config", "--add", kv[0], kv[1])
	}
	head := strings.TrimSpace(s.git("rev-parse", "HEAD"))

	if err := s.r.Reach(ctx, remote, "refs/runner/"); err != nil {
		t.Fatalf("reach: %v", err)
	}
	if err := s.r.Push(ctx, remote, head+":refs/runner/engine/r/1.0/checkpoint"); err != nil {
		t.Fatalf("push: %v", err)
	}
	if got := strings.TrimSpace(s.gitIn(remote, "rev-parse", "refs/runner/engine/r/1.0/checkpoint")); got != head {
		t.Errorf("the remote has %q, want %s", got, head)
	}
	if id, err := s.r.RemoteRef(ctx, remote, "refs/runner/engine/r/1.0/checkpoint"); err != nil || id != head {
		t.Errorf("remote ref: %q, %v", id, err)
	}
	// A fetch writes the repository's own refs.
	if err := s.r.Fetch(ctx, remote, "+refs/runner/engine/r/1.0/checkpoint:refs/runner/engine/r/1.0/result"); err != nil {
		t.Fatalf("fetch: %v", err)
	}
	if got := strings.TrimSpace(s.git("rev-parse", "refs/runner/engine/r/1.0/result")); got != head {
		t.Errorf("fetched %q, want %s", got, head)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a program of the repository's configuration ran")
	}

	for _, bad := range []string{evil, "fd::3", "EXT::sh -c true"} {
		if err := s.r.Reach(ctx, bad, "refs/"); err == nil || !strings.Contains(err.Error(), "runs a program") {
			t.Errorf("remote %q: %v, want it refused", bad, err)
		}
	}
	// The global configuration (the person's) applies, but cannot allow
	// ext:: either.
	global := filepath.Join(t.TempDir(), "gitconfig")
	writeFile(t, global, fmt.Sprintf("[url %q]\n\tinsteadOf = %s\n[protocol \"ext\"]\n\tallow = always\n[protocol]\n\tallow = always\n", evil, remote))
	r, err := Open(ctx, s.dir, Options{Env: append(s.env, "GIT_CONFIG_GLOBAL="+global)})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Reach(ctx, remote, "refs/"); err == nil || !strings.Contains(err.Error(), "transport 'ext' not allowed") {
		t.Errorf("a global insteadOf to ext::: %v, want git to refuse the transport", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a program of the global configuration's ext:: URL ran")
	}
	// No transport directory is left behind.
	if left, _ := filepath.Glob(filepath.Join(tmp, "runner-git-remote-*")); len(left) > 0 {
		t.Errorf("transport directories left: %v", left)
	}
}

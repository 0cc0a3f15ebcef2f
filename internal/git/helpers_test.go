package git

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// needGit skips the test when git is not installed (.ci/run installs it
// where it can).
func needGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed:", err)
	}
}

// testEnv is an environment in which git reads no configuration of the
// machine's or the person's: an empty HOME, no system file, and no
// repository found above the test's folders.
func testEnv(t testing.TB) []string {
	t.Helper()
	home := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") || k == "HOME" || k == "XDG_CONFIG_HOME" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "XDG_CONFIG_HOME="+home, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_CEILING_DIRECTORIES="+filepath.Dir(home))
}

// scratch is a scratch repository and the environment its git commands
// run in.
type scratch struct {
	t   testing.TB
	dir string
	env []string
	r   *Repo
}

// newScratch makes a repository on branch main with a first commit of
// README and .gitignore (ignoring *.log and build/), a committer identity
// in its own configuration, and .runner/.gitignore as runner init makes
// it (state/ not ignored).
func newScratch(t testing.TB) *scratch {
	t.Helper()
	s := newEmptyScratch(t)
	s.git("config", "user.name", "Test Person")
	s.git("config", "user.email", "person@example.com")
	s.write("README", "hello\n")
	s.write(".gitignore", "*.log\nbuild/\n")
	s.write(".runner/.gitignore", "context/\nruns/\nlock\n")
	s.write(".runner/tree.json", "{}\n")
	s.git("add", "-A")
	s.git("commit", "-q", "-m", "first")
	return s
}

// newEmptyScratch makes a repository without any commit or identity.
func newEmptyScratch(t testing.TB) *scratch {
	t.Helper()
	needGit(t)
	s := &scratch{t: t, dir: t.TempDir(), env: testEnv(t)}
	s.git("init", "-q")
	s.git("symbolic-ref", "HEAD", "refs/heads/main")
	r, err := Open(context.Background(), s.dir, Options{Env: s.env})
	if err != nil {
		t.Fatal(err)
	}
	s.r = r
	return s
}

// git runs git in the repository and returns its trimmed stdout; a
// failure fails the test.
func (s *scratch) git(args ...string) string {
	s.t.Helper()
	return s.gitIn(s.dir, args...)
}

func (s *scratch) gitIn(dir string, args ...string) string {
	s.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = s.env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		s.t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// write writes a file of the working tree, making its folders.
func (s *scratch) write(rel, content string) {
	s.t.Helper()
	writeFile(s.t, filepath.Join(s.dir, rel), content)
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// read returns a file of the working tree, "<missing>" when absent.
func (s *scratch) read(rel string) string {
	s.t.Helper()
	b, err := os.ReadFile(filepath.Join(s.dir, rel))
	if os.IsNotExist(err) {
		return "<missing>"
	}
	if err != nil {
		s.t.Fatal(err)
	}
	return string(b)
}

// wantFiles fails the test for each file of the working tree whose
// content is not as given ("<missing>": absent).
func (s *scratch) wantFiles(want map[string]string) {
	s.t.Helper()
	for path, w := range want {
		if got := s.read(path); got != w {
			s.t.Errorf("%s = %q, want %q", path, got, w)
		}
	}
}

// noTempIndexes fails the test when a temporary index is left in the
// git dir.
func (s *scratch) noTempIndexes() {
	s.t.Helper()
	if left, _ := filepath.Glob(filepath.Join(s.r.GitDir(), tempIndexPrefix+"*")); len(left) != 0 {
		s.t.Errorf("temporary indexes left: %q", left)
	}
}

// treeFiles lists the files of a tree (or commit).
func (s *scratch) treeFiles(tree string) []string {
	s.t.Helper()
	out := s.git("ls-tree", "-r", "--name-only", tree)
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// fsck fails the test when git fsck finds anything but dangling objects
// (a snapshot that was not committed leaves some).
func (s *scratch) fsck() {
	s.t.Helper()
	out := s.git("fsck", "--no-progress")
	for _, l := range strings.Split(out, "\n") {
		if l != "" && !strings.HasPrefix(l, "dangling ") {
			s.t.Errorf("git fsck: %s", l)
		}
	}
}

// runtime are the runner's runtime paths, as the loop excludes them.
var runtime = []string{".runner/context/", ".runner/runs/", ".runner/state/", ".runner/lock"}

// paths returns the paths of changes, as "XY path" strings, sorted.
func paths(cs []Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.String())
	}
	slices.Sort(out)
	return out
}

var ctx = context.Background()

package git

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestOpenFindsTheRepositoryFromASubfolder(t *testing.T) {
	s := newScratch(t)
	sub := filepath.Join(s.dir, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := Open(ctx, sub, Options{Env: s.env})
	if err != nil {
		t.Fatal(err)
	}
	top, _ := filepath.EvalSymlinks(s.dir)
	if r.Top() != top {
		t.Errorf("Top = %s, want %s", r.Top(), top)
	}
	if want := filepath.Join(top, ".git"); r.GitDir() != want || r.CommonDir() != want {
		t.Errorf("GitDir, CommonDir = %s, %s, want %s", r.GitDir(), r.CommonDir(), want)
	}
	if b, err := r.CurrentBranch(ctx); err != nil || b != "main" {
		t.Errorf("CurrentBranch = %q, %v", b, err)
	}
}

func TestOpenOutsideAWorkingTree(t *testing.T) {
	s := newScratch(t)
	for name, dir := range map[string]string{
		"plain folder": t.TempDir(),
		"git dir":      filepath.Join(s.dir, ".git"),
	} {
		_, err := Open(ctx, dir, Options{Env: s.env})
		if !errors.Is(err, ErrNotRepo) {
			t.Errorf("%s: Open = %v, want ErrNotRepo", name, err)
		}
	}
	if _, err := Open(ctx, filepath.Join(s.dir, "missing"), Options{Env: s.env}); err == nil || errors.Is(err, ErrNotRepo) {
		t.Errorf("missing folder: Open = %v, want an error naming the folder", err)
	}
}

func TestOpenWithoutGit(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATH", t.TempDir()) // no git there
	_, err := Open(ctx, dir, Options{})
	if !errors.Is(err, ErrNoGit) || !strings.Contains(err.Error(), "not found") {
		t.Errorf("Open without git on PATH = %v, want ErrNoGit saying why", err)
	}
	_, err = Open(ctx, dir, Options{Git: filepath.Join(dir, "no-such-git")})
	if !errors.Is(err, ErrNoGit) {
		t.Errorf("Open with a missing git program = %v, want ErrNoGit", err)
	}
}

// fakeGit writes a shell script standing for git: it answers "version"
// with version and runs body for anything else.
func fakeGit(t *testing.T, version, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "git")
	script := "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = version ] && { echo 'git version " + version + "'; exit 0; }; done\n" + body + "\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOpenRefusesAnOldGit(t *testing.T) {
	git := fakeGit(t, "2.20.1", "exit 0")
	_, err := Open(ctx, t.TempDir(), Options{Git: git})
	if !errors.Is(err, ErrNoGit) || !strings.Contains(err.Error(), "2.20") || !strings.Contains(err.Error(), "2.25 or later") {
		t.Errorf("Open with git 2.20 = %v", err)
	}
}

func TestACallThatHangsTimesOut(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	// The sleep is a child of the script, holding its stdout: stopping
	// the script alone would leave the call waiting for the pipe.
	git := fakeGit(t, "2.99.0", "sleep 60 & echo $! > "+pidFile+"; wait")
	_, err := Open(ctx, t.TempDir(), Options{Git: git, Timeout: time.Second})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("Open with a hanging git = %v, want ErrTimeout", err)
	}
	if !strings.Contains(err.Error(), "rev-parse") || !strings.Contains(err.Error(), "timed out after 1s") {
		t.Errorf("error %q does not name the call and the limit", err)
	}
	b, rerr := os.ReadFile(pidFile)
	if rerr != nil {
		t.Fatal(rerr)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	for i := 0; running(pid); i++ {
		if i == 100 {
			t.Fatalf("the git call's child %d still runs", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// running reports whether process pid runs; a zombie, dead but not yet
// reaped by whoever adopted it, does not.
func running(pid int) bool {
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err == nil {
		// "pid (comm) S ...": the state follows the last ')'.
		s := string(st)
		i := strings.LastIndexByte(s, ')')
		return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
	}
	if _, perr := os.Stat("/proc/self/stat"); perr == nil {
		return false // Linux: no such process
	}
	return syscall.Kill(pid, 0) == nil
}

func TestErrorCarriesStderrAndArguments(t *testing.T) {
	s := newScratch(t)
	_, err := s.r.git(ctx, call{}, "rev-parse", "--verify", "no-such-thing")
	var ge *Error
	if !errors.As(err, &ge) {
		t.Fatalf("err = %v, want *Error", err)
	}
	if ge.ExitCode != 128 || !strings.Contains(ge.Stderr, "Needed a single revision") {
		t.Errorf("Error = %+v", ge)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "git rev-parse --verify no-such-thing: exit status 128: fatal:") {
		t.Errorf("message %q", msg)
	}
}

func TestParseVersion(t *testing.T) {
	for in, want := range map[string][2]int{
		"git version 2.39.5\n":               {2, 39},
		"git version 2.39.3 (Apple Git-146)": {2, 39},
		"git version 2.45.1.windows.1":       {2, 45},
		"git version 3.0.0-rc1":              {3, 0},
		"git version 2.25":                   {2, 25},
	} {
		if got, ok := ParseVersion(in); !ok || got != want {
			t.Errorf("ParseVersion(%q) = %v, %v", in, got, ok)
		}
	}
	for _, in := range []string{"", "hub version 2", "git version x.y"} {
		if _, ok := ParseVersion(in); ok {
			t.Errorf("ParseVersion(%q) accepted", in)
		}
	}
}

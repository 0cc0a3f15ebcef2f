//go:build linux

package sandbox

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestConfineShell: a confined sh writes in its room and to /dev/null,
// reads everywhere, and gets "Permission denied" (EACCES) for every write
// outside it: a sibling folder, .git/hooks, .git/config, .runner, the
// repository's root.
func TestConfineShell(t *testing.T) {
	needLandlock(t)
	root, files := fakeRepo(t)
	src := filepath.Join(root, "src")
	script := `
cd "$1"
try() { if ( eval "$1" ) 2>/dev/null; then echo "allowed: $1"; else echo "denied: $1: $( ( eval "$1" ) 2>&1 >/dev/null)"; fi; }
try 'echo new > src/new.go'
try 'echo more >> src/main.go'
try 'mkdir -p src/a/b && echo x > src/a/b/c'
try 'mv src/a/b/c src/a/c2'
try 'ln src/a/c2 src/hardlink'
try 'ln -s main.go src/symlink'
try 'rm -r src/a'
try ': > src/new.go'
try 'echo gone > /dev/null'
try 'head -c 4 /dev/zero > src/zeros'
try ': > /dev/stdout'
try 'cat .git/config README.md /etc/passwd > /dev/null'
try 'ls / .git .runner > /dev/null'
try 'echo x > ../$(basename "$PWD")-sibling/new'
try 'echo x > .git/hooks/pre-commit'
try 'echo x >> .git/config'
try ': > .git/config'
try 'echo x > .runner/state/run.json'
try 'mkdir .runner/locks'
try 'echo x > README.md'
try 'echo x > new-at-root'
try 'rm .git/hooks/pre-commit.sample'
try 'mv .git/config src/config'
try 'ln -s /bin/sh .git/hooks/post-checkout'
`
	out, code := runConfined(t, Room{Writable: []string{src}}, nil, "sh", "-c", script, "sh", root)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	// The first 13 tries are allowed, the 11 others denied.
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 24 {
		t.Fatalf("%d lines, want 24:\n%s", len(lines), out)
	}
	for i, l := range lines {
		switch {
		case i < 13 && !strings.HasPrefix(l, "allowed: "):
			t.Errorf("should be allowed: %s", l)
		case i >= 13 && !strings.HasPrefix(l, "denied: "):
			t.Errorf("should be denied: %s", l)
		case i >= 13 && !strings.Contains(l, "Permission denied"):
			t.Errorf("denied for another reason than EACCES: %s", l)
		}
	}
	delete(files, "src/main.go")
	checkUnchanged(t, root, files)
	if got, err := os.ReadFile(filepath.Join(src, "main.go")); err != nil || string(got) != "package main\nmore\n" {
		t.Errorf("src/main.go = %q, %v", got, err)
	}
	for _, name := range []string{"new.go", "hardlink", "symlink", "zeros"} {
		if _, err := os.Lstat(filepath.Join(src, name)); err != nil {
			t.Errorf("src/%s: %v", name, err)
		}
	}
}

// TestConfineErrno: the exact error of a write outside the room is
// EACCES, from a Go program too; reads succeed everywhere.
func TestConfineErrno(t *testing.T) {
	needLandlock(t)
	root, files := fakeRepo(t)
	src := filepath.Join(root, "src")
	out := probeConfined(t, Room{Writable: []string{src}},
		"write", filepath.Join(src, "ok"),
		"write", "/dev/null",
		"pty", "/dev/ptmx",
		"read", filepath.Join(root, ".git/config"),
		"write", filepath.Join(root+"-sibling", "new"),
		"write", filepath.Join(root, ".git/hooks/pre-commit"),
		"write", filepath.Join(root, ".git/config"),
		"write", filepath.Join(root, ".runner/state/run.json"),
		"write", filepath.Join(root, ".runner/new"),
	)
	want := fmt.Sprintf(`write %[1]s/src/ok: ok
write /dev/null: ok
pty /dev/ptmx: ok
read %[1]s/.git/config: ok
write %[1]s-sibling/new: EACCES
write %[1]s/.git/hooks/pre-commit: EACCES
write %[1]s/.git/config: EACCES
write %[1]s/.runner/state/run.json: EACCES
write %[1]s/.runner/new: EACCES
`, root)
	if out != want {
		t.Errorf("probe:\n%s\nwant:\n%s", out, want)
	}
	checkUnchanged(t, root, files)
}

// TestConfineWritableFiles: a writable file can be written, but not
// removed, and its folder stays closed.
func TestConfineWritableFiles(t *testing.T) {
	needLandlock(t)
	home := t.TempDir()
	conf := filepath.Join(home, ".claude.json")
	if err := os.WriteFile(conf, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(home, "missing")
	out, code := runConfined(t, Room{Writable: []string{missing}, WritableFiles: []string{conf, filepath.Join(home, "nofile")}}, nil, "sh", "-c", `
echo '{"a":1}' > "$1/.claude.json" && echo wrote
rm -f "$1/.claude.json" || echo not removed
echo x > "$1/.claude.json.tmp" || echo no temp
mkdir "$1/missing" || echo no missing
`, "sh", home)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	for _, want := range []string{
		"runner __confine: note: " + missing + " is not writable: stat " + missing + ": no such file or directory\n",
		"runner __confine: note: " + home + "/nofile is not writable",
		"wrote\n", "not removed\n", "no temp\n", "no missing\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if got, _ := os.ReadFile(conf); string(got) != `{"a":1}`+"\n" {
		t.Errorf(".claude.json = %q", got)
	}
	if entries, _ := os.ReadDir(home); len(entries) != 1 {
		t.Errorf("home has %d entries, want 1", len(entries))
	}
}

// TestConfineChildren: what the confined command starts is confined too,
// also when it leaves the session and its parent exits first.
func TestConfineChildren(t *testing.T) {
	needLandlock(t)
	room, outside := t.TempDir(), t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, code := runConfined(t, Room{Writable: []string{room}}, []string{probeEnv + "=1"}, "sh", "-c", `
sh -c 'sh -c "echo x > $2/grandchild" 2>&1; echo x > $1/child-ok' sh "$1" "$2"
setsid sh -c 'sleep 0.2; "$3" write "$2/orphan" write "$1/orphan" > "$1/orphan.out" 2>&1' sh "$1" "$2" "$3" &
`, "sh", room, outside, exe)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	if !strings.Contains(out, "Permission denied") {
		t.Errorf("the grandchild's write was not denied: %q", out)
	}
	deadline := time.Now().Add(10 * time.Second)
	var orphan []byte
	for time.Now().Before(deadline) {
		if orphan, _ = os.ReadFile(filepath.Join(room, "orphan.out")); strings.Count(string(orphan), "\n") == 2 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if want := fmt.Sprintf("write %s/orphan: EACCES\nwrite %s/orphan: ok\n", outside, room); string(orphan) != want {
		t.Errorf("orphan probe: %q, want %q", orphan, want)
	}
	if _, err := os.Stat(filepath.Join(room, "child-ok")); err != nil {
		t.Error(err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Errorf("%d files written outside the room", len(entries))
	}
}

// TestConfineSignals: with ScopeSignals, a confined command cannot signal
// a process outside its sandbox nor reach its abstract Unix sockets; it
// still signals its own children. Without ScopeSignals it can.
func TestConfineSignals(t *testing.T) {
	if abi := needLandlock(t); abi < 6 {
		t.Skipf("Landlock ABI %d: scoping signals needs 6", abi)
	}
	startSleep := func() (*exec.Cmd, chan struct{}) {
		sleep := exec.Command("sleep", "60")
		if err := sleep.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { sleep.Wait(); close(done) }()
		t.Cleanup(func() { sleep.Process.Kill(); <-done })
		return sleep, done
	}
	sock := fmt.Sprintf("runner-sandbox-test-%d", os.Getpid())
	l, err := net.Listen("unix", "@"+sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()

	sleep, done := startSleep()
	room := Room{Writable: []string{t.TempDir()}, ScopeSignals: true}
	out, code := runConfined(t, room, nil, "sh", "-c", `
kill -TERM "$1" && echo killed
sleep 60 & kill $! && wait $!; echo "own child: $?"
`, "sh", strconv.Itoa(sleep.Process.Pid))
	if code != 0 || strings.Contains(out, "killed") || !strings.Contains(out, "Operation not permitted") || !strings.Contains(out, "own child: 143") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	select {
	case <-done:
		t.Fatalf("sleep ended: %v", sleep.ProcessState)
	case <-time.After(100 * time.Millisecond):
	}
	out = probeConfined(t, room, "kill", strconv.Itoa(sleep.Process.Pid), "connect", sock)
	if want := fmt.Sprintf("kill %d: EPERM\nconnect %s: EPERM\n", sleep.Process.Pid, sock); out != want {
		t.Errorf("probe: %q, want %q", out, want)
	}
	select {
	case <-done:
		t.Fatalf("sleep ended: %v", sleep.ProcessState)
	default:
	}

	// The control: unscoped, the same works.
	room.ScopeSignals = false
	out = probeConfined(t, room, "connect", sock, "kill", strconv.Itoa(sleep.Process.Pid))
	if want := fmt.Sprintf("connect %s: ok\nkill %d: ok\n", sock, sleep.Process.Pid); out != want {
		t.Errorf("unscoped probe: %q, want %q", out, want)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Error("sleep survived an unscoped kill")
	}
}

// TestConfineExecFailures: a program that cannot be found or executed is
// a non-zero exit with a clear message.
func TestConfineExecFailures(t *testing.T) {
	needLandlock(t)
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("not a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		prog string
		code int
		msg  string
	}{
		{"runner-no-such-program", ExitNotFound, `runner __confine: exec: "runner-no-such-program": executable file not found in $PATH`},
		{filepath.Join(dir, "missing"), ExitNotFound, `runner __confine: exec: "` + dir + `/missing": stat ` + dir + "/missing: no such file or directory"},
		{plain, ExitNoExec, `runner __confine: exec: "` + plain + `": permission denied`},
	}
	for _, c := range cases {
		out, code := runConfined(t, Room{}, nil, c.prog)
		if code != c.code || strings.TrimSpace(out) != c.msg {
			t.Errorf("%s: exit %d, %q; want %d, %q", c.prog, code, out, c.code, c.msg)
		}
	}
	// A file that is executable but no program: execve fails after the
	// restriction.
	if err := os.Chmod(plain, 0o755); err != nil {
		t.Fatal(err)
	}
	out, code := runConfined(t, Room{}, nil, plain)
	if code != ExitNoExec || !strings.Contains(out, "runner __confine: exec "+plain+": exec format error") {
		t.Errorf("exit %d, %q", code, out)
	}
}

func TestABI(t *testing.T) {
	abi, err := ABI()
	if (abi == 0) != (err != nil) {
		t.Fatalf("ABI() = %d, %v", abi, err)
	}
	t.Logf("Landlock ABI %d (%v)", abi, err)
}

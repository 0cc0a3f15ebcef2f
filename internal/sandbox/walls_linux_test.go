//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// spawnEnv makes the test binary start the helper command line in its
// arguments as Clone says, and exit with its status: the test's way of
// starting a room as another user (spawnAs).
const spawnEnv = "SANDBOX_TEST_SPAWN"

// spawnAs, when set, is the user runConfined starts rooms as, through a
// copy of the test binary that user can run.
var spawnAs *struct {
	uid uint32
	exe string
}

func spawn(w []string) int {
	var room Room
	if len(w) < 3 || json.Unmarshal([]byte(w[2]), &room) != nil {
		fmt.Fprintf(os.Stderr, "spawn: bad command line %q\n", w)
		return 2
	}
	cmd := exec.Command(w[0], w[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	Clone(room, cmd.SysProcAttr)
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode()
	case err != nil:
		fmt.Fprintf(os.Stderr, "spawn: %v\n", err)
		return 2
	}
	return 0
}

// testExe is the test binary, as the user rooms are started as can run
// it.
func testExe(t *testing.T) string {
	t.Helper()
	if spawnAs != nil {
		return spawnAs.exe
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// unprivileged is the user id the tests run a room as when they run as
// root: nobody's.
const unprivileged = 65534

// nsModes runs f for each way this machine builds a room in namespaces:
// NamespacesUser as the test's user and, when the test runs as root,
// NamespacesRoot, and NamespacesUser as an unprivileged user (whose
// files f makes with mkdir, which opens them to that user). A mode the
// machine does not give is skipped, with why.
func nsModes(t *testing.T, f func(t *testing.T, ns string)) {
	needLandlock(t)
	run := func(name, ns string) {
		t.Run(name, func(t *testing.T) {
			if err := ProbeNamespaces(ns); err != nil {
				t.Skipf("no %s namespaces here: %v", ns, err)
			}
			f(t, ns)
		})
	}
	run("user", NamespacesUser)
	if os.Getuid() != 0 {
		return
	}
	run("root", NamespacesRoot)
	t.Run("unprivileged", func(t *testing.T) {
		dir := mkdir(t)
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(exe)
		if err != nil {
			t.Fatal(err)
		}
		copyExe := filepath.Join(dir, "sandbox.test")
		if err := os.WriteFile(copyExe, data, 0o755); err != nil {
			t.Fatal(err)
		}
		spawnAs = &struct {
			uid uint32
			exe string
		}{unprivileged, copyExe}
		defer func() { spawnAs = nil }()
		out, code := runConfined(t, Room{Namespaces: NamespacesUser, Probe: true, Writable: []string{dir}}, nil, "true")
		if code != 0 {
			t.Skipf("an unprivileged user cannot make namespaces here: %s", out)
		}
		f(t, NamespacesUser)
	})
}

// mkdir makes a temporary directory every user may write, below folders
// every user may enter.
func mkdir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	for p := d; p != "/" && p != os.TempDir(); p = filepath.Dir(p) {
		mode := os.FileMode(0o755)
		if p == d {
			mode = 0o777
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	if spawnAs != nil {
		os.Chown(d, int(spawnAs.uid), int(spawnAs.uid))
	}
	return d
}

// writeFile writes a file the rooms' user owns.
func writeFile(t *testing.T, p, data string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(p, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if spawnAs != nil {
		os.Chown(p, int(spawnAs.uid), int(spawnAs.uid))
	}
}

// TestRoomWalls: in namespaces, everything outside the room is read-only
// to the last mode bit: writes, chmod, chown and utime outside fail (the
// person's checkout made world-writable, a key made world-readable, the
// runner's journal made unreadable), inside they work; a read-only path
// inside the room can be neither written, removed nor replaced; the
// room has a /dev/shm of its own.
func TestRoomWalls(t *testing.T) {
	nsModes(t, func(t *testing.T, ns string) {
		room, outside := mkdir(t), mkdir(t)
		key, in, gitFile := filepath.Join(outside, "id_ed25519"), filepath.Join(room, "main.go"), filepath.Join(room, ".git")
		writeFile(t, key, "secret\n", 0o600)
		writeFile(t, in, "package main\n", 0o644)
		writeFile(t, gitFile, "gitdir: /the/runner/s\n", 0o644)
		out := probeConfined(t, Room{Writable: []string{room}, ReadOnly: []string{gitFile}, Namespaces: ns},
			"chmod", key, "chmod", outside, "chown", key, "utime", key, "write", key, "write", filepath.Join(outside, "new"),
			"chmod", in, "chown", in, "utime", in, "write", in,
			"write", gitFile, "remove", gitFile, "chmod", gitFile,
			"write", "/dev/shm/room-"+strconv.Itoa(os.Getpid()))
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			op, rest, _ := strings.Cut(line, " ")
			path, res, _ := strings.Cut(rest, ": ")
			inside := strings.HasPrefix(path, room+"/") && path != gitFile || strings.HasPrefix(path, "/dev/shm/")
			switch {
			case inside && res != "ok":
				t.Errorf("%s %s inside the room: %s", op, path, res)
			case !inside && res == "ok":
				t.Errorf("%s %s outside the room was allowed", op, path)
			case !inside && path != gitFile && op != "write" && res != "EROFS":
				t.Errorf("%s %s: %s, want EROFS", op, path, res)
			}
		}
		if st, err := os.Stat(key); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("the key: %v, %v", st.Mode(), err)
		}
		if data, err := os.ReadFile(gitFile); err != nil || string(data) != "gitdir: /the/runner/s\n" {
			t.Errorf(".git = %q, %v", data, err)
		}
		if _, err := os.Stat("/dev/shm/room-" + strconv.Itoa(os.Getpid())); err == nil {
			t.Error("the room's /dev/shm is the machine's")
		}
	})
}

// TestRoomProc: in namespaces, /proc shows the room's processes only: the
// runner's environment, which it withheld from the room, cannot be read
// through /proc/<pid>/environ, even by root.
func TestRoomProc(t *testing.T) {
	nsModes(t, func(t *testing.T, ns string) {
		room := mkdir(t)
		self := strconv.Itoa(os.Getpid())
		out, code := runConfined(t, Room{Writable: []string{room}, Namespaces: ns}, nil, "sh", "-c", `
cat /proc/$1/environ >/dev/null 2>&1 && echo "read the runner's environ"
ls /proc | grep -c '^[0-9]*$'
cat /proc/1/comm
`, "sh", self)
		if code != 0 || strings.Contains(out, "read the runner's environ") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if n, _ := strconv.Atoi(lines[0]); n < 2 || n > 4 { // the helper, sh, ls, grep
			t.Errorf("the room sees %d processes:\n%s", n, out)
		}
		if comm := filepath.Base(testExe(t)); lines[len(lines)-1] != comm[:min(len(comm), 15)] {
			t.Errorf("process 1 of the room is not the helper: %q", lines[len(lines)-1])
		}
	})
}

// TestRoomSockets: in namespaces, a path socket outside the room (a tmux
// server's, an ssh-agent's) cannot be connected to, nor one made later in
// the session's socket folders; a socket the room makes works; the
// variables naming outside sockets are not passed; a program outside the
// room, under /tmp, still runs.
func TestRoomSockets(t *testing.T) {
	nsModes(t, func(t *testing.T, ns string) {
		room, outside := mkdir(t), mkdir(t)
		sock := filepath.Join(outside, "default")
		l, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go acceptAll(l)
		tool := filepath.Join(outside, "tool.sh")
		writeFile(t, tool, "#!/bin/sh\necho the tool ran\n", 0o755)
		env := []string{"TMUX=" + sock + ",1,0", "SSH_AUTH_SOCK=" + sock, "DOCKER_HOST=unix://" + sock, "DBUS_SESSION_BUS_ADDRESS=unix:path=" + sock, "KEEP_ME=1"}
		out := probeConfinedEnv(t, Room{Writable: []string{room}, Namespaces: ns}, env,
			"dial", sock, "getenv", "TMUX", "getenv", "SSH_AUTH_SOCK", "getenv", "DOCKER_HOST", "getenv", "DBUS_SESSION_BUS_ADDRESS", "getenv", "KEEP_ME")
		want := fmt.Sprintf("dial %s: ECONNREFUSED\ngetenv TMUX: unset\ngetenv SSH_AUTH_SOCK: unset\ngetenv DOCKER_HOST: unset\ngetenv DBUS_SESSION_BUS_ADDRESS: unset\ngetenv KEEP_ME: set\n", sock)
		if out != want {
			t.Errorf("probe:\n%s\nwant:\n%s", out, want)
		}
		// The room's own socket; a tool outside the room, under /tmp;
		// tmux's folder, where a server started later would put its
		// socket, empty.
		tmuxDir := filepath.Join(outside, "tmux-"+strconv.Itoa(roomUID()))
		if err := os.Mkdir(tmuxDir, 0o700); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(tmuxDir, "later"), "", 0o600)
		own := filepath.Join(room, "own.sock")
		out = probeConfinedEnv(t, Room{Writable: []string{room}, Namespaces: ns}, []string{"TMUX_TMPDIR=" + outside},
			"listen", own, "dial", own, "run", tool, "list", tmuxDir)
		want = fmt.Sprintf("listen %[1]s: ok\ndial %[1]s: ok\nrun %[2]s: the tool ran\nlist %[3]s: 0 entries\n", own, tool, tmuxDir)
		if out != want {
			t.Errorf("probe:\n%s\nwant:\n%s", out, want)
		}
	})
}

// roomUID is the user id rooms run as.
func roomUID() int {
	if spawnAs != nil {
		return int(spawnAs.uid)
	}
	return os.Getuid()
}

func acceptAll(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		io.Copy(io.Discard, c)
		c.Close()
	}
}

// TestRoomMaxProcesses: in a user namespace of its own, a room's fork
// flood stops at MaxProcesses (RLIMIT_NPROC, counted for the room's
// processes only), for a user other than root, whom the kernel does not
// limit so (package proc gives root's rooms a cgroup pids.max).
func TestRoomMaxProcesses(t *testing.T) {
	nsModes(t, func(t *testing.T, ns string) {
		if ns != NamespacesUser || roomUID() == 0 {
			t.Skip("RLIMIT_NPROC does not hold for root")
		}
		room := mkdir(t)
		out := probeConfined(t, Room{Writable: []string{room}, Namespaces: ns, MaxProcesses: 40}, "spawn", "100")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		n, _ := strconv.Atoi(strings.TrimPrefix(lines[0], "started "))
		if len(lines) != 2 || n < 5 || n >= 40 || !strings.Contains(lines[1], "resource temporarily unavailable") {
			t.Errorf("a flood of 100 in a room of 40:\n%s", out)
		}
		// Unbounded, the same room starts them all.
		if out := probeConfined(t, Room{Writable: []string{room}, Namespaces: ns}, "spawn", "100"); !strings.HasPrefix(out, "started 100\n") {
			t.Errorf("without a limit:\n%s", out)
		}
	})
}

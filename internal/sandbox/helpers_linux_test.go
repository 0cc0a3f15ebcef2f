//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// probeEnv makes the test binary a probe: it tries the operations in its
// arguments and prints one line for each, "ok" or the errno's name.
const probeEnv = "SANDBOX_TEST_PROBE"

func TestMain(m *testing.M) {
	if os.Getenv(spawnEnv) == "1" {
		os.Unsetenv(spawnEnv)
		os.Exit(spawn(os.Args[1:]))
	}
	if os.Getenv(probeEnv) == "1" {
		os.Exit(probe(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// probe runs operations given as pairs: "write PATH" (create or append),
// "read PATH", "kill PID" (SIGTERM), "connect NAME" (abstract Unix
// socket @NAME).
func probe(args []string) int {
	for i := 0; i+1 < len(args); i += 2 {
		op, arg := args[i], args[i+1]
		var err error
		switch op {
		case "write":
			var f *os.File
			f, err = os.OpenFile(arg, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
			if err == nil {
				_, err = f.WriteString("probe\n")
				f.Close()
			}
		case "read":
			_, err = os.ReadFile(arg)
		case "kill":
			pid, _ := strconv.Atoi(arg)
			err = syscall.Kill(pid, syscall.SIGTERM)
		case "pty":
			err = openPty()
		case "connect":
			var c net.Conn
			c, err = net.Dial("unix", "@"+arg)
			if err == nil {
				c.Close()
			}
		case "dial":
			var c net.Conn
			c, err = net.Dial("unix", arg)
			if err == nil {
				c.Close()
			}
		case "listen":
			// Kept open until the probe exits.
			_, err = net.Listen("unix", arg)
		case "run":
			var out []byte
			out, err = exec.Command(arg).Output()
			if err == nil {
				err = errors.New(strings.TrimSpace(string(out)))
			}
		case "list":
			var entries []os.DirEntry
			entries, err = os.ReadDir(arg)
			if err == nil {
				err = fmt.Errorf("%d entries", len(entries))
			}
		case "spawn":
			// Starts up to N sleeps, says how many started and why
			// no more, and stops them.
			n, _ := strconv.Atoi(arg)
			var started []*exec.Cmd
			for len(started) < n {
				c := exec.Command("sleep", "30")
				if err = c.Start(); err != nil {
					break
				}
				started = append(started, c)
			}
			for _, c := range started {
				c.Process.Kill()
				c.Wait()
			}
			fmt.Printf("started %d\n", len(started))
		case "chmod":
			err = os.Chmod(arg, 0o777)
		case "chown":
			err = os.Chown(arg, os.Getuid(), os.Getgid())
		case "utime":
			err = os.Chtimes(arg, time.Unix(1e9, 0), time.Unix(1e9, 0))
		case "remove":
			err = os.Remove(arg)
		case "getenv":
			if _, ok := os.LookupEnv(arg); ok {
				err = errors.New("set")
			} else {
				err = errors.New("unset")
			}
		default:
			err = fmt.Errorf("unknown probe %q", op)
		}
		fmt.Printf("%s %s: %s\n", op, arg, errnoName(err))
	}
	return 0
}

// openPty opens a pseudo-terminal pair as a terminal program does: the
// ioctls on /dev/ptmx and /dev/pts/N need the "ioctl dev" right.
func openPty() error {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		return fmt.Errorf("unlock: %w", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		return fmt.Errorf("TIOCGPTN: %w", err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return err
	}
	defer s.Close()
	if _, err := unix.IoctlGetTermios(int(s.Fd()), unix.TCGETS); err != nil {
		return fmt.Errorf("TCGETS: %w", err)
	}
	if _, err := s.WriteString("x"); err != nil {
		return err
	}
	return nil
}

func errnoName(err error) string {
	var errno syscall.Errno
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, syscall.EACCES):
		return "EACCES"
	case errors.Is(err, syscall.EPERM):
		return "EPERM"
	case errors.Is(err, syscall.EROFS):
		return "EROFS"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "ECONNREFUSED"
	case errors.Is(err, syscall.ENOENT):
		return "ENOENT"
	case errors.Is(err, syscall.EBUSY):
		return "EBUSY"
	case errors.As(err, &errno):
		return fmt.Sprintf("errno %d (%v)", int(errno), errno)
	default:
		return err.Error()
	}
}

// needLandlock skips where the kernel has no Landlock, and returns its
// ABI version.
func needLandlock(t *testing.T) int {
	t.Helper()
	abi, err := ABI()
	if abi == 0 {
		t.Skipf("no Landlock on this system: %v", err)
	}
	return abi
}

// runConfined runs argv confined to room through the test binary,
// playing __confine, and returns its combined output and exit status.
func runConfined(t *testing.T, room Room, env []string, argv ...string) (string, int) {
	t.Helper()
	exe := testExe(t)
	w := Wrap(exe, room, argv)
	cmd := exec.Command(w[0], w[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	Clone(room, cmd.SysProcAttr)
	if spawnAs != nil {
		// The helper is started by a process of that user, as the
		// runner of a person who is not root starts it.
		cmd = exec.Command(spawnAs.exe, w...)
		cmd.Env = append(os.Environ(), append(env, spawnEnv+"=1")...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: spawnAs.uid, Gid: spawnAs.uid}}
	}
	out, err := cmd.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %q: %v", w, err)
	}
	return string(out), code
}

// probeConfined runs the probe confined to room.
func probeConfined(t *testing.T, room Room, ops ...string) string {
	t.Helper()
	return probeConfinedEnv(t, room, nil, ops...)
}

// probeConfinedEnv runs the probe confined to room with more variables
// in its environment.
func probeConfinedEnv(t *testing.T, room Room, env []string, ops ...string) string {
	t.Helper()
	exe := testExe(t)
	out, code := runConfined(t, room, append(env, probeEnv+"=1"), append([]string{exe}, ops...)...)
	if code != 0 {
		t.Fatalf("probe exited %d: %s", code, out)
	}
	return out
}

// fakeRepo makes a repository-like tree: the room (src), and what must
// stay out of reach around it. It returns the tree's root and the files
// that exist, with their content.
func fakeRepo(t *testing.T) (root string, files map[string]string) {
	t.Helper()
	root = t.TempDir()
	files = map[string]string{
		".git/config":                  "[core]\n\tbare = false\n",
		".git/hooks/pre-commit.sample": "#!/bin/sh\n",
		".runner/state/run.json":       "{}\n",
		"README.md":                    "read me\n",
		"src/main.go":                  "package main\n",
	}
	for name, data := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sibling := filepath.Join(filepath.Dir(root), filepath.Base(root)+"-sibling")
	if err := os.Mkdir(sibling, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sibling) })
	return root, files
}

// checkUnchanged fails the test if a file of the tree changed or one
// appeared outside src.
func checkUnchanged(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(root, name))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q unchanged", name, got, err, want)
		}
	}
	filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		rel, _ := filepath.Rel(root, p)
		if err == nil && !info.IsDir() && !strings.HasPrefix(rel, "src/") {
			if _, ok := files[rel]; !ok {
				t.Errorf("%s was created outside the room", rel)
			}
		}
		return nil
	})
	sibling := root + "-sibling"
	if entries, _ := os.ReadDir(sibling); len(entries) > 0 {
		t.Errorf("%s got %d entries", sibling, len(entries))
	}
}

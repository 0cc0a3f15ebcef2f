//go:build linux

package proc

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReadEnvironWhole reads a process's environment of several pages,
// larger than the first buffer, whole.
func TestReadEnvironWhole(t *testing.T) {
	// One variable may hold at most 128 KiB (MAX_ARG_STRLEN).
	cmd := exec.Command("sleep", "30")
	cmd.Env = []string{"FIRST=1"}
	for i := range 4 {
		cmd.Env = append(cmd.Env, "BIG"+strconv.Itoa(i)+"="+strings.Repeat("x", 50<<10))
	}
	cmd.Env = append(cmd.Env, "LAST=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	// Start returns once the exec began; until the kernel has set up the
	// new program's environment it reads empty.
	var env []byte
	deadline := time.Now().Add(30 * time.Second)
	for len(env) == 0 {
		var err error
		if env, err = ReadEnviron(cmd.Process.Pid, nil); err != nil {
			t.Fatal(err)
		}
		if len(env) == 0 && time.Now().After(deadline) {
			t.Fatal("the environment still reads empty after 30s")
		}
	}
	want := strings.Join(cmd.Env, "\x00") + "\x00"
	if string(env) != want {
		t.Fatalf("read %d bytes, want %d; ends %q", len(env), len(want), env[max(0, len(env)-20):])
	}
}

// TestEnvironCutByExec shows why ReadEnviron reads in one call: a
// process that executes another program between two reads of its
// environ file leaves the second read at the end of the file, so a
// reader in pieces (os.ReadFile reads 512 bytes first) gets the
// environment cut short. The shell here waits for a line, then executes
// sleep with the same environment.
func TestEnvironCutByExec(t *testing.T) {
	cmd := exec.Command("sh", "-c", "read line; exec sleep 30")
	cmd.Env = []string{"PAD=" + strings.Repeat("p", 4096), "MARK=1"}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	pid := strconv.Itoa(cmd.Process.Pid)
	// The first piece, once the shell's environment is set up (it reads
	// empty until then).
	var f *os.File
	first := make([]byte, 512)
	deadline := time.Now().Add(30 * time.Second)
	for f == nil {
		g, err := os.Open("/proc/" + pid + "/environ")
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := g.Read(first); n > 0 {
			f = g
			break
		}
		g.Close()
		if time.Now().After(deadline) {
			t.Fatal("the shell's environment still reads empty after 30s")
		}
	}
	defer f.Close()
	in.Write([]byte("go\n"))
	// Wait for the exec: the command line becomes sleep's.
	deadline = time.Now().Add(30 * time.Second)
	for {
		line, _ := os.ReadFile("/proc/" + pid + "/cmdline")
		if bytes.HasPrefix(line, []byte("sleep\x00")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the shell did not execute sleep within 30s (command line %q)", line)
		}
		time.Sleep(time.Millisecond)
	}
	rest := make([]byte, 64<<10)
	n, _ := f.Read(rest)
	if n != 0 {
		t.Skipf("this kernel went on reading the old environment after the exec (%d bytes); ReadEnviron reads in one call all the same", n)
	}
	// Whole, or empty while sleep's environment is being set up.
	var env []byte
	for len(env) == 0 {
		var err error
		if env, err = ReadEnviron(cmd.Process.Pid, nil); err != nil {
			t.Fatal(err)
		}
		if len(env) == 0 && time.Now().After(deadline) {
			t.Fatal("sleep's environment still reads empty after 30s")
		}
	}
	if !bytes.Contains(env, []byte("MARK=1\x00")) || len(env) < 4096 {
		t.Fatalf("ReadEnviron after the exec: %d bytes, want the whole environment", len(env))
	}
}

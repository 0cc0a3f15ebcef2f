package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/e2e"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// A failure of the runner's own I/O — a full disk, a read-only folder —
// stops the run with exit 1 saying what to do, and costs the task no
// attempt: the next run, once the cause is gone, runs the task or records
// the result its agent had already delivered. These tests make the
// failure real: a tmpfs of a few MiB filled to the last byte, a tmpfs
// remounted read-only. Mounting needs root (CAP_SYS_ADMIN); elsewhere
// they are skipped, saying so.

// mountTmpfs mounts a tmpfs of size (mount's syntax, "4m") on a new
// folder and returns it; it is unmounted when the test ends.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs to fill (needs root): %v: %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fill writes to a file in dir until the file system is full.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler.bin")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			break
		}
	}
	for _, n := range []int{4096, 512, 1} {
		for {
			if _, err := f.Write(buf[:n]); err != nil {
				break
			}
		}
	}
	return path
}

func attemptsOf(t *testing.T, p state.Paths, id string) (int, tree.Status) {
	t.Helper()
	tr, err := tree.Load(p.Tree())
	if err != nil {
		t.Fatal(err)
	}
	n := tree.NewIndex(tr).Node(id)
	if n == nil {
		t.Fatalf("no node %s", id)
	}
	return n.Attempts, n.EffectiveStatus()
}

const doneScript = `{"default": {"message": {"status": "done", "summary": "did it"}}}`

// TestDiskFullBeforeAgent: the disk is full when the runner would start
// an iteration. The run exits 1 saying the disk is full; no attempt is
// spent, however often it is tried; once space is freed the task runs.
func TestDiskFullBeforeAgent(t *testing.T) {
	root := mountTmpfs(t, "4m")
	r := e2e.FakeAgentRepoAt(t, root, e2e.OneTask, doneScript, `timeout = "1m"`)
	filler := fill(t, root)
	for try := 0; try < 3; try++ {
		res := r.RunRunner(time.Minute, 0, nil, "run")
		if res.Code != 1 || !strings.Contains(res.Out, "no space left on device") || !strings.Contains(res.Out, "the disk is full: free some space") {
			t.Fatalf("run %d on a full disk: exit %d, want 1 naming the cause and the fix:\n%s", try+1, res.Code, res.Out)
		}
		if a, _ := attemptsOf(t, r.Paths, "only"); a != 0 {
			t.Fatalf("after %d runs on a full disk the task has %d attempts, want 0", try+1, a)
		}
	}
	os.Remove(filler)
	res := r.RunRunner(time.Minute, 0, nil, "run")
	if res.Code != 0 {
		t.Fatalf("run after space was freed: exit %d:\n%s", res.Code, res.Out)
	}
	if a, st := attemptsOf(t, r.Paths, "only"); a != 0 || st != tree.StatusDone {
		t.Errorf("task: %d attempts, %s; want done without an attempt spent", a, st)
	}
}

// TestReadOnlyStateBeforeAgent: .runner/state is on a file system
// remounted read-only. The run exits 1 naming the cause; no attempt is
// spent; once it is writable again the task runs.
func TestReadOnlyStateBeforeAgent(t *testing.T) {
	r := e2e.FakeAgentRepo(t, e2e.OneTask, doneScript, `timeout = "1m"`)
	st := r.Paths.StateDir()
	if err := os.MkdirAll(st, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", st).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root): %v: %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command("umount", "-l", st).Run() })
	if out, err := exec.Command("mount", "-o", "remount,ro", st).CombinedOutput(); err != nil {
		t.Skipf("cannot remount read-only: %v: %s", err, out)
	}
	res := r.RunRunner(time.Minute, 0, nil, "run")
	if res.Code != 1 || !strings.Contains(res.Out, "read-only file system") || !strings.Contains(res.Out, "remount it read-write") {
		t.Fatalf("run on a read-only state folder: exit %d, want 1 naming the cause and the fix:\n%s", res.Code, res.Out)
	}
	if a, _ := attemptsOf(t, r.Paths, "only"); a != 0 {
		t.Fatalf("the task has %d attempts, want 0", a)
	}
	if out, err := exec.Command("mount", "-o", "remount,rw", st).CombinedOutput(); err != nil {
		t.Fatalf("remount read-write: %v: %s", err, out)
	}
	if res := r.RunRunner(time.Minute, 0, nil, "run"); res.Code != 0 {
		t.Fatalf("run once writable: exit %d:\n%s", res.Code, res.Out)
	}
	if a, st := attemptsOf(t, r.Paths, "only"); a != 0 || st != tree.StatusDone {
		t.Errorf("task: %d attempts, %s; want done without an attempt spent", a, st)
	}
}

// TestDiskFullAfterAgent: the agent's work fills the disk; it still
// delivers its final message, and then the runner cannot write its own
// records. The run exits 1 saying the disk is full; the next run, once
// space is freed, records the agent's "done" from the message it saved,
// without running the agent again and without spending an attempt.
func TestDiskFullAfterAgent(t *testing.T) {
	root := mountTmpfs(t, "4m")
	// The agent keeps one page free for its own message, then fills the
	// rest: its message is written, the runner's records are not.
	script := `{"steps": [{"attempt": 1, "shell": [
  "head -c 4096 /dev/zero > reserve.bin",
  "head -c 8000000 /dev/zero > big.bin 2>/dev/null; rm reserve.bin"],
  "message": {"status": "done", "summary": "built everything"}}],
 "default": {"message": {"status": "blocked", "summary": "ran a second time"}}}`
	r := e2e.FakeAgentRepoAt(t, root, e2e.OneTask, script, `timeout = "1m"`)
	res := r.RunRunner(time.Minute, 0, nil, "run")
	if res.Code != 1 || !strings.Contains(res.Out, "the disk is full: free some space") {
		t.Fatalf("run that fills the disk: exit %d, want 1 saying the disk is full:\n%s", res.Code, res.Out)
	}
	os.Remove(filepath.Join(root, "big.bin"))
	res = r.RunRunner(time.Minute, 0, nil, "run")
	if res.Code != 0 {
		t.Fatalf("run after space was freed: exit %d:\n%s", res.Code, res.Out)
	}
	if a, st := attemptsOf(t, r.Paths, "only"); a != 0 || st != tree.StatusDone {
		t.Errorf("task: %d attempts, %s; want done from the saved message, no attempt spent:\n%s", a, st, res.Out)
	}
	m, err := state.LoadMeta(r.Paths.RunDir(1))
	if err != nil || m.Outcome != state.OutcomeDone || m.Summary != "built everything" {
		t.Errorf("iteration 1: %+v (%v); want done with the agent's summary", m, err)
	}
}

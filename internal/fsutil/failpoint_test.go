package fsutil

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childEnv makes the test binary, started by runChild, carry out the
// writes of TestFailpointChild instead of running the tests.
const childEnv = "FSUTIL_FAILPOINT_CHILD_DIR"

// TestFailpointChild is the child side of the failpoint tests: in dir it
// writes a.json, b.json, a.json, b.json, b.json atomically (content "1"
// to "5") and appends "line 6\n" to journal.jsonl. Before each write it
// writes a copy of the file under copy/ with ReplaceCopy, which the hook
// must not count. Without childEnv it does nothing.
func TestFailpointChild(t *testing.T) {
	dir := os.Getenv(childEnv)
	if dir == "" {
		t.Skip("only runs as the child of the failpoint tests")
	}
	if err := os.Mkdir(filepath.Join(dir, "copy"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"a.json", "b.json", "a.json", "b.json", "b.json"} {
		if err := ReplaceCopy(filepath.Join(dir, "copy", name), []byte{byte('1' + i)}, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := WriteFileAtomic(filepath.Join(dir, name), []byte{byte('1' + i)}, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := AppendLine(filepath.Join(dir, "journal.jsonl"), []byte("line 6\n")); err != nil {
		t.Fatal(err)
	}
}

// runChild runs TestFailpointChild in dir with RUNNER_FAILPOINT=fp and
// returns how it ended.
func runChild(t *testing.T, dir, fp string) (*os.ProcessState, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFailpointChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+dir, FailpointEnv+"="+fp)
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("child with %s=%s did not finish within a minute", FailpointEnv, fp)
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("run child: %v", err)
	}
	return cmd.ProcessState, string(out)
}

func killedBySIGKILL(ps *os.ProcessState) bool {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

func TestFailpoints(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the check reads a Unix wait status")
	}
	tests := []struct {
		fp      string
		killed  bool
		a, b    string // contents after the child ended ("" = missing)
		temps   int    // temporary files left
		journal string
	}{
		{"temp", true, "", "", 1, "line 1\nline 2\n"},
		{"rename", true, "1", "", 0, "line 1\nline 2\n"},
		{"temp:b.json", true, "1", "", 1, "line 1\nline 2\n"},
		{"rename:b.json@2", true, "3", "4", 0, "line 1\nline 2\n"},
		{"*@3", true, "1", "", 1, "line 1\nline 2\n"}, // temp, rename of a.json; temp of b.json
		{"append", true, "3", "5", 0, "line 1\nline 2\nlin"},
		{"rename:c.json", false, "3", "5", 0, "line 1\nline 2\nline 6\n"},
		{"temp@6", false, "3", "5", 0, "line 1\nline 2\nline 6\n"},
	}
	for _, tt := range tests {
		t.Run(tt.fp, func(t *testing.T) {
			dir := t.TempDir()
			journal := filepath.Join(dir, "journal.jsonl")
			if err := os.WriteFile(journal, []byte("line 1\nline 2\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			ps, out := runChild(t, dir, tt.fp)
			if got := killedBySIGKILL(ps); got != tt.killed {
				t.Fatalf("killed by SIGKILL = %v, want %v (%s)\n%s", got, tt.killed, ps, out)
			}
			if !tt.killed && !ps.Success() {
				t.Fatalf("child failed: %s\n%s", ps, out)
			}
			for name, want := range map[string]string{"a.json": tt.a, "b.json": tt.b, "journal.jsonl": tt.journal} {
				got, err := os.ReadFile(filepath.Join(dir, name))
				if want == "" && !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s = %q, %v; want no file", name, got, err)
				}
				if want != "" && string(got) != want {
					t.Errorf("%s = %q, %v; want %q", name, got, err, want)
				}
			}
			removed, err := RemoveTemps(dir)
			if err != nil || len(removed) != tt.temps {
				t.Errorf("RemoveTemps = %v, %v; want %d temporary files", removed, err, tt.temps)
			}
			// The next append cuts a torn line off before writing.
			if err := AppendLine(journal, []byte("line 7\n")); err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(journal)
			if !strings.HasPrefix(string(data), "line 1\nline 2\n") || !strings.HasSuffix(string(data), "\nline 7\n") ||
				strings.Contains(string(data), "lin\n") {
				t.Errorf("journal after the next append = %q", data)
			}
		})
	}
}

func TestFailpointMalformed(t *testing.T) {
	for _, fp := range []string{"bogus", "temp@0", "rename@x", "append:state/run_state.json"} {
		t.Run(fp, func(t *testing.T) {
			ps, out := runChild(t, t.TempDir(), fp)
			if ps.ExitCode() != 2 || !strings.Contains(out, FailpointEnv) {
				t.Fatalf("exit %d, output %q; want exit 2 naming %s", ps.ExitCode(), out, FailpointEnv)
			}
		})
	}
}

func TestAppendLineCutsTornLine(t *testing.T) {
	long := strings.Repeat("x", 9000) // spans several read chunks
	tests := []struct{ before, want string }{
		{"", "new\n"},
		{"a\n", "a\nnew\n"},
		{"a\n{\"torn", "a\nnew\n"},
		{"no newline at all", "new\n"},
		{"a\n" + long, "a\nnew\n"},
		{long + "\n" + long, long + "\nnew\n"},
	}
	for i, tt := range tests {
		path := filepath.Join(t.TempDir(), "journal.jsonl")
		if tt.before != "" {
			os.WriteFile(path, []byte(tt.before), 0o644)
		}
		if err := AppendLine(path, []byte("new\n")); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if got, _ := os.ReadFile(path); string(got) != tt.want {
			t.Errorf("case %d: file = %.40q..., want %.40q...", i, got, tt.want)
		}
	}
	if err := AppendLine(filepath.Join(t.TempDir(), "j"), []byte("no newline")); err == nil {
		t.Error("AppendLine accepted data without a final newline")
	}
}

// TestFailpointKeepOnlyWhenNamed: the keep's sync runs in the background,
// so * does not count it (a write point must name the same write on every
// run); named, it is reached.
func TestFailpointKeepOnlyWhenNamed(t *testing.T) {
	saved := failpoint
	defer func() { failpoint = saved; failpointHits.Store(0) }()
	for _, tt := range []struct {
		spec  string
		point string
		want  bool
	}{
		{"*", FailKeep, false},
		{"keep:sync", FailKeep, true},
		{"review:held", FailReview, true},
		{"*", FailReview, true},
	} {
		spec, err := parseFailpoint(tt.spec)
		if err != nil {
			t.Fatalf("parse %q: %v", tt.spec, err)
		}
		failpoint = spec
		failpointHits.Store(0)
		label := "sync"
		if tt.point == FailReview {
			label = "held"
		}
		if got := failHere(tt.point, label); got != tt.want {
			t.Errorf("%s at %s:%s: failHere = %v, want %v", tt.spec, tt.point, label, got, tt.want)
		}
	}
}

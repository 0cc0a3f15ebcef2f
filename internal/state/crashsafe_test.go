package state

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/fsutil"
)

// TestHostileStateFiles checks that each kind of hostile input is refused
// with a message naming the file and the reason, and quickly: the reads
// are bounded, so even a huge file costs only its limit.
func TestHostileStateFiles(t *testing.T) {
	deep := `{"version":1,"in_flight":` + strings.Repeat(`{"node":`, 1000) + `1` + strings.Repeat(`}`, 1001)
	tests := []struct {
		name    string
		content func() []byte
		want    string
	}{
		{"oversized", func() []byte { return bytes.Repeat([]byte(" "), maxStateFile+1) }, "file too large"},
		{"invalid UTF-8", func() []byte { return []byte("{\"version\":1,\n\"last_node\":\"\xff\"}") }, "line 2, column 14: invalid UTF-8"},
		{"duplicate key", func() []byte { return []byte(`{"version":1,"iteration":1,"iteration":2}`) }, `duplicate key "iteration"`},
		{"nesting depth", func() []byte { return []byte(deep) }, "nest"},
		{"unknown field", func() []byte { return []byte(`{"version":1,"iterations":3}`) }, `unknown field "iterations"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "run_state.json")
			if err := os.WriteFile(path, tt.content(), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadRunState(path)
			if err == nil || !strings.Contains(err.Error(), "run_state.json") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("LoadRunState = %v; want an error naming the file and saying %q", err, tt.want)
			}
		})
	}
	t.Run("huge file is not read whole", func(t *testing.T) {
		// A sparse 1 TiB file: reading it would take hours.
		path := filepath.Join(t.TempDir(), "run_state.json")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(1 << 40); err != nil {
			f.Close()
			t.Skipf("no sparse files here: %v", err)
		}
		f.Close()
		done := make(chan error, 1)
		go func() { _, err := LoadRunState(path); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, fsutil.ErrTooLarge) {
				t.Fatalf("LoadRunState = %v; want file too large", err)
			}
		case <-time.After(time.Minute):
			t.Fatal("LoadRunState read a 1 TiB file for a minute")
		}
	})
}

func TestAppendNotesStartsOnItsOwnLine(t *testing.T) {
	tests := []struct{ before, want string }{
		{"# Assumptions\n\n- kept by hand", "# Assumptions\n\n- kept by hand\n- [iteration 2, node a] new one\n"},
		{"# Assumptions\n\n- [iteration 1, node a] torn by a cr", "# Assumptions\n\n- [iteration 1, node a] torn by a cr\n- [iteration 2, node a] new one\n"},
		{"", "- [iteration 2, node a] new one\n"},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "assumptions.md")
		os.WriteFile(path, []byte(tt.before), 0o644)
		if err := AppendNotes(path, "Assumptions", 2, "a", []string{" new\n one "}); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != tt.want {
			t.Errorf("after %q:\n%q\nwant\n%q", tt.before, got, tt.want)
		}
	}
	if got := NoteLines(3, "b", []string{"x  y", " ", "z"}); strings.Join(got, "") != "- [iteration 3, node b] x y\n- [iteration 3, node b] z\n" {
		t.Errorf("NoteLines = %q", got)
	}
}

// TestAcquireLockDeadHolder: the runner named in the lock file is dead but
// a child it was starting still shares the lock for a moment; the next
// runner takes the lock as soon as the child lets it go. A live holder is
// refused at once, naming its pid.
func TestAcquireLockDeadHolder(t *testing.T) {
	p := NewPaths(t.TempDir())
	if err := os.MkdirAll(p.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	hold := func(pid int) *os.File {
		t.Helper()
		f, err := os.Open(p.Dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p.Lock(), []byte(fmt.Sprintf("pid %d since 2026-11-22T07:15:00Z\n", pid)), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}

	live := hold(os.Getpid())
	if _, err := AcquireLock(p); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("AcquireLock with a live holder = %v; want ErrLocked naming pid %d", err, os.Getpid())
	}
	if holderDead(p) {
		t.Fatal("holderDead says this process is dead")
	}
	live.Close()

	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	child := hold(gone.Process.Pid) // the dead runner's child, still holding the lock
	if !holderDead(p) {
		t.Fatalf("holderDead says the reaped pid %d is alive", gone.Process.Pid)
	}
	letGo := time.AfterFunc(100*time.Millisecond, func() { child.Close() })
	defer letGo.Stop()
	l, err := AcquireLock(p)
	if err != nil {
		t.Fatalf("AcquireLock did not wait out the dead holder's child: %v", err)
	}
	defer l.Release()
	if got, _ := os.ReadFile(p.Lock()); !strings.Contains(string(got), fmt.Sprintf("pid %d ", os.Getpid())) {
		t.Errorf("lock file = %q, want this process as the holder", got)
	}
}

package watch

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// next returns the next batch, failing the test if none comes in time.
func next(t *testing.T, w *Watcher) []string {
	t.Helper()
	select {
	case b, ok := <-w.Changes():
		if !ok {
			t.Fatal("Changes closed unexpectedly")
		}
		return b
	case <-time.After(10 * time.Second):
		t.Fatal("no change reported within 10s")
	}
	return nil
}

func newWatcher(t *testing.T, files []string, debounce time.Duration) *Watcher {
	t.Helper()
	w, err := New(files, Options{Debounce: debounce, OnError: func(err error) { t.Errorf("watch error: %v", err) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// editorSave saves the way editors and atomic writers do: a temporary
// file in the same directory renamed over the target.
func editorSave(t *testing.T, path, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".swp")
	write(t, tmp, content)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func TestReportsOnlyFilesOfInterest(t *testing.T) {
	tests := []struct {
		name   string
		noise  func(t *testing.T, dir string) // must not be reported
		change func(t *testing.T, dir string) // must be reported
		want   []string
	}{
		{
			name:   "editor save by rename after unrelated writes",
			noise:  func(t *testing.T, dir string) { write(t, filepath.Join(dir, "other.txt"), "x") },
			change: func(t *testing.T, dir string) { editorSave(t, filepath.Join(dir, "tree.json"), "{}") },
			want:   []string{"tree.json"},
		},
		{
			name: "chmod is ignored",
			noise: func(t *testing.T, dir string) {
				if err := os.Chmod(filepath.Join(dir, "tree.json"), 0o600); err != nil {
					t.Fatal(err)
				}
			},
			change: func(t *testing.T, dir string) { write(t, filepath.Join(dir, "config.toml"), "x") },
			want:   []string{"config.toml"},
		},
		{
			name:   "removal is a change",
			noise:  func(t *testing.T, dir string) { write(t, filepath.Join(dir, ".tmp-tree.json-1"), "x") },
			change: func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "config.toml")) },
			want:   []string{"config.toml"},
		},
		{
			name:  "a burst is one batch",
			noise: func(t *testing.T, dir string) {},
			change: func(t *testing.T, dir string) {
				for i := 0; i < 20; i++ {
					write(t, filepath.Join(dir, "tree.json"), "{}")
					write(t, filepath.Join(dir, "config.toml"), "x")
				}
			},
			want: []string{"config.toml", "tree.json"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, filepath.Join(dir, "tree.json"), "{}")
			write(t, filepath.Join(dir, "config.toml"), "")
			w := newWatcher(t, []string{filepath.Join(dir, "tree.json"), filepath.Join(dir, "config.toml")}, 300*time.Millisecond)
			tc.noise(t, dir)
			tc.change(t, dir)
			got := next(t, w)
			var want []string
			for _, n := range tc.want {
				want = append(want, filepath.Join(dir, n))
			}
			if !slices.Equal(got, want) {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

func TestDirectoryCreatedLater(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "state")
	stop := filepath.Join(sub, "stop")
	w := newWatcher(t, []string{stop}, 0)
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := next(t, w); !slices.Equal(got, []string{stop}) {
		t.Fatalf("after mkdir: got %q, want %q", got, []string{stop})
	}
	// Now the directory itself is watched: a file written in it is seen.
	write(t, stop, "stop\n")
	if got := next(t, w); !slices.Equal(got, []string{stop}) {
		t.Fatalf("after write: got %q, want %q", got, []string{stop})
	}
}

func TestDirectoryRemovedAndRecreated(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "state")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(sub, "run_state.json")
	w := newWatcher(t, []string{file}, 0)
	if err := os.RemoveAll(sub); err != nil {
		t.Fatal(err)
	}
	if got := next(t, w); !slices.Equal(got, []string{file}) {
		t.Fatalf("after removal: got %q", got)
	}
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := next(t, w); !slices.Equal(got, []string{file}) {
		t.Fatalf("after mkdir: got %q", got)
	}
	// The recreated directory is watched again.
	write(t, file, "{}")
	if got := next(t, w); !slices.Equal(got, []string{file}) {
		t.Fatalf("after write: got %q", got)
	}
}

func TestNewFailsWithoutParent(t *testing.T) {
	dir := t.TempDir()
	if _, err := New([]string{filepath.Join(dir, "a", "b", "c")}, Options{}); err == nil {
		t.Fatal("New succeeded although neither the directory nor its parent exists")
	}
	if _, err := New(nil, Options{}); err == nil {
		t.Fatal("New succeeded with no files")
	}
}

func TestCloseClosesChanges(t *testing.T) {
	dir := t.TempDir()
	w, err := New([]string{filepath.Join(dir, "f")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "f"), "x")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w.Close() // a second Close is harmless
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-w.Changes():
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("Changes not closed within 10s of Close")
		}
	}
}

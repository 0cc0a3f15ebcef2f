//go:build unix

package fsutil

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostileRepo is a confined .runner/ with a folder and a file outside it
// that links made inside point to.
type hostileRepo struct {
	dir     string // the confined folder
	outside string // a folder outside it
	secret  string // a file in outside
}

const secretContent = "export PATH=/usr/bin\n"

func newHostileRepo(t *testing.T) *hostileRepo {
	t.Helper()
	base := t.TempDir()
	h := &hostileRepo{dir: filepath.Join(base, "repo", ".runner"), outside: filepath.Join(base, "outside")}
	h.secret = filepath.Join(h.outside, "bashrc")
	for _, d := range []string{h.dir, filepath.Join(h.dir, "state"), filepath.Join(h.outside, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{h.secret, filepath.Join(h.outside, "sub", "keep.txt")} {
		if err := os.WriteFile(f, []byte(secretContent), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := Confine(h.dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Release(h.dir) })
	return h
}

func (h *hostileRepo) path(rel string) string { return filepath.Join(h.dir, rel) }

// untouched fails the test when anything outside changed.
func (h *hostileRepo) untouched(t *testing.T) {
	t.Helper()
	for _, f := range []string{h.secret, filepath.Join(h.outside, "sub", "keep.txt")} {
		got, err := os.ReadFile(f)
		if err != nil || string(got) != secretContent {
			t.Fatalf("%s outside the confined folder changed: %q, %v", f, got, err)
		}
	}
	entries, _ := os.ReadDir(h.outside)
	if len(entries) != 2 {
		t.Fatalf("the outside folder holds %d entries, want 2", len(entries))
	}
}

func TestConfineRefusesALinkedFolder(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "elsewhere")
	os.Mkdir(real, 0o755)
	link := filepath.Join(base, ".runner")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	err := Confine(link)
	if !errors.Is(err, ErrSymlink) || !strings.Contains(err.Error(), "does not follow symbolic links under .runner/") ||
		!strings.Contains(err.Error(), ".runner") {
		t.Fatalf("Confine(a link) = %v; want a refusal naming it", err)
	}
	if err := Confine(real); err != nil {
		t.Fatal(err)
	}
	if err := Confine(real); err != nil {
		t.Fatalf("confining again: %v", err)
	}
	Release(real)
	if !Confined(filepath.Join(real, "x")) {
		t.Fatal("one Release of two Confines ended the confinement")
	}
	Release(real)
	if Confined(filepath.Join(real, "x")) {
		t.Fatal("still confined after the last Release")
	}
}

// TestConfinedWritesDoNotFollowLinks makes, inside a confined folder, the
// links a hostile agent would make, then calls every writing function of
// the package on them: nothing outside changes, and each either replaces
// the link or refuses naming it.
func TestConfinedWritesDoNotFollowLinks(t *testing.T) {
	ops := []struct {
		name string
		do   func(h *hostileRepo, path string) error
	}{
		{"WriteFileAtomic", func(h *hostileRepo, p string) error { return WriteFileAtomic(p, []byte("new\n"), 0o644) }},
		{"ReplaceFile NotSynced", func(h *hostileRepo, p string) error { return ReplaceFile(p, []byte("new\n"), 0o644, NotSynced) }},
		{"AppendSync", func(h *hostileRepo, p string) error { return AppendSync(p, []byte("new\n")) }},
		{"AppendLineAs", func(h *hostileRepo, p string) error { return AppendLineAs(p, []byte("new\n"), NotSynced) }},
		{"OpenWrite", func(h *hostileRepo, p string) error { return writeVia(OpenWrite, p) }},
		{"OpenAppend", func(h *hostileRepo, p string) error { return writeVia(OpenAppend, p) }},
		{"Create", func(h *hostileRepo, p string) error { return writeVia(Create, p) }},
		{"Truncate", func(h *hostileRepo, p string) error { return Truncate(p, 0) }},
		{"Remove", func(h *hostileRepo, p string) error { return Remove(p) }},
		{"RemoveAll", func(h *hostileRepo, p string) error { return RemoveAll(p) }},
		{"MkdirAll", func(h *hostileRepo, p string) error { return MkdirAll(filepath.Join(p, "x"), 0o755) }},
		{"Rename", func(h *hostileRepo, p string) error {
			os.WriteFile(h.path("src"), []byte("x"), 0o644)
			return Rename(h.path("src"), p)
		}},
		{"RemoveTemps", func(h *hostileRepo, p string) error { _, err := RemoveTemps(filepath.Dir(p)); return err }},
		{"SyncFile", func(h *hostileRepo, p string) error { return SyncFile(p) }},
	}
	links := []struct {
		name string
		make func(h *hostileRepo) string // returns the path to operate on
	}{
		{"file linked to a file outside", func(h *hostileRepo) string {
			os.Symlink(h.secret, h.path("state/notes.md"))
			return h.path("state/notes.md")
		}},
		{"file linked to a folder outside", func(h *hostileRepo) string {
			os.Symlink(h.outside, h.path("context"))
			return h.path("context")
		}},
		{"folder linked to a folder outside", func(h *hostileRepo) string {
			os.RemoveAll(h.path("state"))
			os.Symlink(h.outside, h.path("state"))
			return h.path("state/bashrc")
		}},
		{"deeper folder linked outside", func(h *hostileRepo) string {
			os.Symlink(h.outside, h.path("state/runs"))
			return h.path("state/runs/sub/keep.txt")
		}},
		{"relative link up and out", func(h *hostileRepo) string {
			os.Symlink("../../../outside/bashrc", h.path("state/rel.md"))
			return h.path("state/rel.md")
		}},
		{"hard link to a file outside", func(h *hostileRepo) string {
			os.Link(h.secret, h.path("state/goal.md"))
			return h.path("state/goal.md")
		}},
	}
	for _, l := range links {
		for _, op := range ops {
			t.Run(l.name+"/"+op.name, func(t *testing.T) {
				h := newHostileRepo(t)
				p := l.make(h)
				err := op.do(h, p)
				h.untouched(t)
				if err != nil && !errors.Is(err, ErrSymlink) && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
					t.Errorf("%s = %v; want success, a refused link or a missing file", op.name, err)
				}
				if errors.Is(err, ErrSymlink) && !strings.Contains(err.Error(), "does not follow symbolic links") {
					t.Errorf("the refusal does not say why: %v", err)
				}
			})
		}
	}
}

func writeVia(open func(string) (*os.File, error), path string) error {
	f, err := open(path)
	if err != nil {
		return err
	}
	_, err = f.WriteString("new\n")
	return errors.Join(err, f.Close())
}

// TestHardLinkedFilesAreCopied: appending to, truncating or rewriting a
// file with another link gives the name a copy of its own; the other
// name keeps its content. Also outside any confined folder.
func TestHardLinkedFilesAreCopied(t *testing.T) {
	for _, confined := range []bool{true, false} {
		for _, op := range []struct {
			name string
			do   func(string) error
			want string
		}{
			{"AppendSync", func(p string) error { return AppendSync(p, []byte("mine\n")) }, secretContent + "mine\n"},
			{"AppendLine", func(p string) error { return AppendLine(p, []byte("mine\n")) }, secretContent + "mine\n"},
			{"Truncate", func(p string) error { return Truncate(p, 7) }, secretContent[:7]},
			{"OpenWrite", func(p string) error { return writeVia(OpenWrite, p) }, "new\n"},
			{"Create", func(p string) error { return writeVia(Create, p) }, "new\n"},
		} {
			t.Run(op.name+map[bool]string{true: " confined", false: " plain"}[confined], func(t *testing.T) {
				h := newHostileRepo(t)
				if !confined {
					Release(h.dir)
				}
				p := h.path("state/journal.jsonl")
				if err := os.Link(h.secret, p); err != nil {
					t.Fatal(err)
				}
				if err := op.do(p); err != nil {
					t.Fatal(err)
				}
				h.untouched(t)
				got, _ := os.ReadFile(p)
				if string(got) != op.want {
					t.Errorf("the runner's file holds %q, want %q", got, op.want)
				}
				var st syscall.Stat_t
				if err := syscall.Lstat(p, &st); err != nil || st.Nlink != 1 {
					t.Errorf("the runner's file has %d links, want 1 (%v)", st.Nlink, err)
				}
			})
		}
	}
}

// TestReadsRefuseSpecialFiles: a named pipe where a file is read is
// refused at once, naming the file and what it is; so is a folder.
func TestReadsRefuseSpecialFiles(t *testing.T) {
	for _, confined := range []bool{true, false} {
		h := newHostileRepo(t)
		if !confined {
			Release(h.dir)
		}
		fifo := h.path("tree.json")
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Skipf("no named pipes here: %v", err)
		}
		reads := map[string]func(string) error{
			"Open":        func(p string) error { f, err := Open(p); f.Close(); return err },
			"ReadFile":    func(p string) error { _, err := ReadFile(p); return err },
			"ReadLimited": func(p string) error { _, err := ReadLimited(p, 100, true); return err },
		}
		for name, read := range reads {
			done := make(chan error, 1)
			go func() { done <- read(fifo) }()
			select {
			case err := <-done:
				if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "tree.json: is a named pipe (FIFO), not a regular file") {
					t.Errorf("%s(a FIFO) = %v; want a refusal naming the file", name, err)
				}
			case <-time.After(time.Minute):
				t.Fatalf("%s blocked on a FIFO for a minute", name)
			}
			if err := read(h.path("state")); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "is a folder") {
				t.Errorf("%s(a folder) = %v; want a refusal", name, err)
			}
		}
		// Writing: the FIFO is replaced by a file of the runner's own.
		if err := AppendSync(fifo, []byte("x\n")); err != nil {
			t.Fatal(err)
		}
		if got, err := ReadFile(fifo); err != nil || string(got) != "x\n" {
			t.Errorf("after an append to a FIFO: %q, %v", got, err)
		}
	}
}

// TestReadsRefuseLinksWhenConfined: under a confined folder a read does
// not follow a symbolic link either.
func TestReadsRefuseLinksWhenConfined(t *testing.T) {
	h := newHostileRepo(t)
	os.Symlink(h.secret, h.path("config.toml"))
	_, err := ReadLimited(h.path("config.toml"), 1<<20, true)
	if !errors.Is(err, ErrSymlink) || !strings.Contains(err.Error(), "config.toml is a symbolic link") {
		t.Fatalf("ReadLimited(a link) = %v; want a refusal naming it", err)
	}
	os.Symlink(h.outside, h.path("runs"))
	if _, err := ReadDir(h.path("runs")); !errors.Is(err, ErrSymlink) {
		t.Fatalf("ReadDir(a link) = %v; want a refusal", err)
	}
	if _, err := ReadFile(h.path("runs/bashrc")); !errors.Is(err, ErrSymlink) || !strings.Contains(err.Error(), "runs is a symbolic link") {
		t.Fatalf("ReadFile(through a linked folder) = %v; want a refusal naming the link", err)
	}
}

// TestRemoveAllStaysInside: emptying a folder removes links in it, never
// what they point to, also in folders below it.
func TestRemoveAllStaysInside(t *testing.T) {
	h := newHostileRepo(t)
	ctx := h.path("context")
	os.MkdirAll(filepath.Join(ctx, "a", "b"), 0o755)
	os.Symlink(h.outside, filepath.Join(ctx, "a", "b", "out"))
	os.Symlink(h.secret, filepath.Join(ctx, "secret"))
	os.Link(h.secret, filepath.Join(ctx, "a", "hard"))
	if err := RemoveAll(ctx); err != nil {
		t.Fatal(err)
	}
	h.untouched(t)
	if _, err := os.Lstat(ctx); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("context/ is still there: %v", err)
	}
}

// TestReleaseUnderOperations confines and releases a folder while other
// goroutines write in it: an operation never uses a closed descriptor
// (the race detector and the results say so), and every write lands.
func TestReleaseUnderOperations(t *testing.T) {
	dir := t.TempDir()
	const writers, appends = 4, 200
	done := make(chan error, writers)
	for w := range writers {
		go func() {
			path := filepath.Join(dir, "w"+strings.Repeat("x", w)+".jsonl")
			for range appends {
				if err := AppendLineAs(path, []byte("line\n"), NotSynced); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for i := 0; i < 100; i++ {
		if err := Confine(dir); err != nil {
			t.Fatal(err)
		}
		Release(dir)
	}
	for range writers {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	for w := range writers {
		data, err := os.ReadFile(filepath.Join(dir, "w"+strings.Repeat("x", w)+".jsonl"))
		if err != nil || len(data) != appends*len("line\n") {
			t.Errorf("writer %d: %d bytes, %v", w, len(data), err)
		}
	}
}

// TestConfinedFolderMadeAgain: the confined folder is removed (the agent's
// `git clean -fdx` took all of .runner/) and made again at the same path:
// the files written from then on land in the new folder. A link made in
// its place instead is refused.
func TestConfinedFolderMadeAgain(t *testing.T) {
	h := newHostileRepo(t)
	if err := os.RemoveAll(h.dir); err != nil {
		t.Fatal(err)
	}
	if err := MkdirAll(h.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := MkdirAll(h.path("state"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(h.path("state/run_state.json"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(h.path("state/run_state.json")); err != nil || string(got) != "{}\n" {
		t.Fatalf("after the folder was made again: %q, %v", got, err)
	}

	if err := os.RemoveAll(h.dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(h.outside, h.dir); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(h.path("bashrc"), []byte("evil\n"), 0o644); err == nil {
		t.Error("wrote through a link made in the confined folder's place")
	}
	h.untouched(t)
}

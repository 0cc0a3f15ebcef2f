package state

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/runner-cli/runner/internal/fsutil"
)

// Keep is a second copy of what the runner must never lose, kept in the
// repository's git directory, where the routine commands an agent runs in
// the working tree (`git clean -fdx`, `git stash -u`, `git checkout .`)
// never reach: the state files (run_state.json, the journal, the notes),
// the recorded run folders, and the last tree.json and config.toml the
// runner read or wrote. People keep reading everything under .runner/;
// the keep is only read to put back what disappeared from there.
//
// The copy is brought up to date (Sync) before anything but the runner
// works in the repository: before an agent or the guards run. Files
// written after that moment are the runner's own and it holds them in
// memory. The keep is not fsynced: it guards against the files being
// deleted, not against a power loss, against which the files under
// .runner/ are themselves durable.
//
// Run folders are kept as hard links (no data is copied), recorded ones
// only; tree.json and config.toml likewise. Where a link cannot be made
// (another file system), the file is copied.
type Keep struct {
	p   Paths
	dir string // <git common dir>/runner/<id>

	// linked is the highest run folder linked into the keep.
	linked int
}

// The keep's files, relative to its folder; the state files mirror their
// names under .runner/state.
var keptStateFiles = []string{"run_state.json", "journal.jsonl", "journal.1.jsonl", "assumptions.md", "questions.md"}

// keepDirID is the file holding the identity (device and inode) of the
// .runner directory the keep belongs to.
const keepDirID = "runner-dir-id"

// OpenKeep returns the keep of the repository at p.Root, creating its
// folder, or nil when the repository is not in a git working tree (there
// nothing runs git clean).
func OpenKeep(p Paths) (*Keep, error) {
	common, ok := GitCommonDir(p.Root)
	if !ok {
		return nil, nil
	}
	abs, err := filepath.Abs(p.Dir)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(abs))
	k := &Keep{p: p, dir: filepath.Join(common, "runner", "keep-"+hex.EncodeToString(sum[:6]))}
	if err := os.MkdirAll(filepath.Join(k.dir, "state"), 0o755); err != nil {
		return nil, fmt.Errorf("create the runner's keep in the git directory: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(k.dir, "runs"), 0o755); err != nil {
		return nil, fmt.Errorf("create the runner's keep in the git directory: %w", err)
	}
	if err := writeIfChanged(filepath.Join(k.dir, "origin"), []byte(abs+"\n")); err != nil {
		return nil, err
	}
	k.linked = k.lastRun()
	return k, nil
}

// Dir is the keep's folder.
func (k *Keep) Dir() string { return k.dir }

// GitCommonDir returns the git directory shared by every worktree of the
// repository holding dir (the .git folder of the main working tree), found
// by walking up from dir as git does: a .git folder, or a .git file naming
// a linked worktree's git directory, whose commondir file points to the
// shared one. It reads files only: no git program is needed to find a
// folder.
func GitCommonDir(dir string) (string, bool) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	ceilings := gitCeilings()
	for {
		dotgit := filepath.Join(dir, ".git")
		if st, err := os.Lstat(dotgit); err == nil {
			switch {
			case st.IsDir():
				return commonOf(dotgit), true
			case st.Mode().IsRegular():
				data, err := fsutil.ReadLimited(dotgit, 4096, true)
				if err != nil {
					return "", false
				}
				gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
				if !ok {
					return "", false
				}
				gitdir = strings.TrimSpace(gitdir)
				if !filepath.IsAbs(gitdir) {
					gitdir = filepath.Join(dir, gitdir)
				}
				if st, err := os.Stat(gitdir); err != nil || !st.IsDir() {
					return "", false
				}
				return commonOf(gitdir), true
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir || ceilings[parent] {
			return "", false
		}
		dir = parent
	}
}

// gitCeilings returns the folders of GIT_CEILING_DIRECTORIES, which git
// does not walk up into while looking for a repository: the runner's own
// search stops where git's does, so that both see the same repository.
// Like git, it ignores entries that are not absolute.
func gitCeilings() map[string]bool {
	v := os.Getenv("GIT_CEILING_DIRECTORIES")
	if v == "" {
		return nil
	}
	m := make(map[string]bool)
	for _, d := range filepath.SplitList(v) {
		if filepath.IsAbs(d) {
			m[filepath.Clean(d)] = true
		}
	}
	return m
}

// commonOf follows a git directory's commondir file, if any.
func commonOf(gitdir string) string {
	data, err := fsutil.ReadLimited(filepath.Join(gitdir, "commondir"), 4096, true)
	if err != nil {
		return gitdir
	}
	c := strings.TrimSpace(string(data))
	if !filepath.IsAbs(c) {
		c = filepath.Join(gitdir, c)
	}
	return filepath.Clean(c)
}

// NoteOwner records that the keep belongs to the .runner directory held
// open as dir (the locked one), so that a later start can tell a .runner
// whose state an agent removed (the same directory) from one a person
// made afresh with `runner init` (another directory).
func (k *Keep) NoteOwner(id string) error {
	return writeIfChanged(filepath.Join(k.dir, keepDirID), []byte(id+"\n"))
}

// Owner returns the identity NoteOwner last recorded, or "".
func (k *Keep) Owner() string {
	data, err := fsutil.ReadLimited(filepath.Join(k.dir, keepDirID), 256, true)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// DirID is the identity of a directory for NoteOwner: its device and
// inode numbers.
func DirID(path string) string {
	st, err := os.Lstat(path)
	if err != nil {
		return ""
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d:%d", sys.Dev, sys.Ino)
}

// Sync brings the keep up to date with .runner/: the state files, the
// run folders recorded since the last Sync (every run folder up to and
// including upTo), tree.json and config.toml. A file missing under
// .runner/ is left as it is in the keep: Sync never deletes (Prune does,
// for run folders loop.keep_runs removed).
func (k *Keep) Sync(upTo int) error {
	var errs []error
	for _, name := range keptStateFiles {
		errs = append(errs, mirror(filepath.Join(k.p.StateDir(), name), filepath.Join(k.dir, "state", name)))
	}
	errs = append(errs, linkOrCopy(k.p.Tree(), filepath.Join(k.dir, "tree.json")))
	errs = append(errs, linkOrCopy(k.p.Config(), filepath.Join(k.dir, "config.toml")))
	for n := k.linked + 1; n <= upTo; n++ {
		errs = append(errs, k.keepRun(n))
	}
	if upTo > k.linked {
		k.linked = upTo
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("update the runner's keep in %s: %w", k.dir, err)
	}
	return nil
}

// keepRun links the files of run folder n into the keep.
func (k *Keep) keepRun(n int) error {
	src := k.p.RunDir(n)
	entries, err := os.ReadDir(src)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	dst := filepath.Join(k.dir, "runs", RunName(n))
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), fsutil.TempPrefix) {
			continue
		}
		errs = append(errs, linkOrCopy(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())))
	}
	return errors.Join(errs...)
}

// Prune removes the kept run folders below n (loop.keep_runs removed
// theirs).
func (k *Keep) Prune(below int) {
	for _, n := range k.runs() {
		if n >= below {
			return
		}
		os.RemoveAll(filepath.Join(k.dir, "runs", RunName(n)))
	}
}

// Restored says what Restore put back.
type Restored struct {
	Files []string // paths relative to the repository root
	Runs  int      // run folders
}

// Empty reports whether nothing was put back.
func (r Restored) Empty() bool { return len(r.Files) == 0 && r.Runs == 0 }

func (r Restored) String() string {
	var parts []string
	if len(r.Files) > 0 {
		parts = append(parts, strings.Join(r.Files, ", "))
	}
	if r.Runs > 0 {
		parts = append(parts, fmt.Sprintf("%d run folders", r.Runs))
	}
	return strings.Join(parts, " and ")
}

// Restore puts back, from the keep, what is missing under .runner/: the
// .runner folder itself and its state/ and runs/ folders, the state
// files, tree.json and config.toml, and whole run folders. It never
// replaces a file that exists. The restored state files are made durable.
func (k *Keep) Restore() (Restored, error) {
	var done Restored
	for _, d := range []string{k.p.Dir, k.p.StateDir(), k.p.RunsDir()} {
		if err := fsutil.MkdirAll(d, 0o755); err != nil {
			return done, fmt.Errorf("restore %s: %w", k.p.Rel(d), err)
		}
	}
	put := func(kept, path string, copyData bool) error {
		if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if _, err := os.Stat(kept); err != nil {
			return nil
		}
		var err error
		if copyData {
			err = copyFile(kept, path, fsutil.Durable)
		} else {
			err = linkOrCopy(kept, path)
		}
		if err != nil {
			return fmt.Errorf("restore %s: %w", k.p.Rel(path), err)
		}
		done.Files = append(done.Files, k.p.Rel(path))
		return nil
	}
	for _, name := range keptStateFiles {
		// The state files are written again by the runner: a copy, not a
		// link, so that the keep's copy stays as it was.
		if err := put(filepath.Join(k.dir, "state", name), filepath.Join(k.p.StateDir(), name), true); err != nil {
			return done, err
		}
	}
	if err := put(filepath.Join(k.dir, "tree.json"), k.p.Tree(), false); err != nil {
		return done, err
	}
	if err := put(filepath.Join(k.dir, "config.toml"), k.p.Config(), false); err != nil {
		return done, err
	}
	for _, n := range k.runs() {
		dst := k.p.RunDir(n)
		if _, err := os.Lstat(dst); !errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err := fsutil.MkdirAll(dst, 0o755); err != nil {
			return done, fmt.Errorf("restore %s: %w", k.p.Rel(dst), err)
		}
		src := filepath.Join(k.dir, "runs", RunName(n))
		entries, _ := os.ReadDir(src)
		for _, e := range entries {
			if err := linkOrCopy(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
				return done, fmt.Errorf("restore %s: %w", k.p.Rel(dst), err)
			}
		}
		done.Runs++
	}
	if !done.Empty() {
		if err := fsutil.SyncDir(k.p.StateDir()); err != nil {
			return done, err
		}
	}
	return done, nil
}

// LastIteration is the highest iteration number the keep knows of: its
// copy of run_state.json (last recorded, or in flight), its last started
// journal record, its newest run folder. Iteration numbers at or below it
// are never given again, even when .runner/state was lost.
func (k *Keep) LastIteration() int {
	n := k.lastRun()
	if rs, err := LoadRunState(filepath.Join(k.dir, "state", "run_state.json")); err == nil {
		n = max(n, rs.LastKnown())
	}
	if rec, _, err := LastStart(filepath.Join(k.dir, "state", "journal.jsonl")); err == nil && rec != nil {
		n = max(n, rec.Iteration)
	}
	return n
}

// runs lists the kept run folders, oldest first.
func (k *Keep) runs() []int {
	entries, _ := os.ReadDir(filepath.Join(k.dir, "runs"))
	var out []int
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err == nil && n > 0 && RunName(n) == e.Name() && e.IsDir() {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

func (k *Keep) lastRun() int {
	runs := k.runs()
	if len(runs) == 0 {
		return 0
	}
	return runs[len(runs)-1]
}

// mirror makes dst hold what src holds. The journal and the notes only
// grow, so when dst is a prefix of src only the new bytes are appended;
// otherwise (run_state.json, a rotated journal) dst is replaced by a
// copy. A missing src leaves dst as it is.
func mirror(src, dst string) error {
	sst, ok, err := regularSource(src)
	if !ok {
		return err
	}
	dstSt, err := os.Stat(dst)
	if err == nil && dstSt.Size() <= sst.Size() && dstSt.Size() > 0 && isPrefix(src, dst, dstSt.Size()) {
		if dstSt.Size() == sst.Size() {
			return nil
		}
		return appendFrom(src, dst, dstSt.Size())
	}
	return copyFile(src, dst, fsutil.NotSynced)
}

// isPrefix compares the last bytes of dst's size bytes in both files: the
// files the keep mirrors by appending only ever grow at their end, so a
// matching end of the common part means dst is src's prefix.
func isPrefix(src, dst string, size int64) bool {
	const window = 512
	off := max(size-window, 0)
	a, errA := readAt(src, off, size-off)
	b, errB := readAt(dst, off, size-off)
	return errA == nil && errB == nil && bytes.Equal(a, b)
}

func readAt(path string, off, n int64) ([]byte, error) {
	f, err := fsutil.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, off); err != nil {
		return nil, err
	}
	return buf, nil
}

// appendFrom appends src's bytes from off on to dst.
func appendFrom(src, dst string, off int64) error {
	in, err := fsutil.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, io.NewSectionReader(in, off, 1<<62)); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// copyFile replaces dst with a copy of src: a keep's copy (NotSynced)
// or, when the keep restores, a file of the runner's (made durable).
func copyFile(src, dst string, d fsutil.Durability) error {
	data, err := fsutil.ReadFile(src)
	if err != nil {
		return err
	}
	if d == fsutil.NotSynced {
		return fsutil.ReplaceCopy(dst, data, 0o644)
	}
	return fsutil.ReplaceFile(dst, data, 0o644, d)
}

// linkOrCopy makes dst the same file as src (a hard link), unless it
// already is; across file systems, or where links are refused, dst gets a
// copy. A missing src leaves dst as it is.
func linkOrCopy(src, dst string) error {
	sst, ok, err := regularSource(src)
	if !ok {
		return err
	}
	if dst2, err := os.Lstat(dst); err == nil && os.SameFile(sst, dst2) {
		return nil
	}
	tmp := dst + ".link-" + strconv.Itoa(os.Getpid())
	os.Remove(tmp)
	if err := os.Link(src, tmp); err == nil {
		if err := os.Rename(tmp, dst); err != nil {
			os.Remove(tmp)
			return err
		}
		return nil
	}
	return copyFile(src, dst, fsutil.NotSynced)
}

// writeIfChanged writes data to path unless it already holds it.
func writeIfChanged(path string, data []byte) error {
	if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, data) {
		return nil
	}
	return fsutil.ReplaceCopy(path, data, 0o644)
}

// regularSource says whether src is a file the keep copies: a regular
// file (ok); a missing one, or anything else (not the runner's file),
// is left alone without an error.
func regularSource(src string) (os.FileInfo, bool, error) {
	st, err := os.Lstat(src)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return st, st.Mode().IsRegular(), nil
}

package git

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Worktree is a working tree of the repository, as `git worktree list`
// describes it.
type Worktree struct {
	Path   string // absolute
	Head   string // the commit checked out ("" when none yet)
	Branch string // the branch checked out ("main"); "" when detached
	Bare   bool   // the bare repository itself (it has no files)
	Locked bool   // `git worktree lock`ed: not pruned when missing
	// Prunable: its folder is gone; `git worktree prune` forgets it.
	Prunable bool
}

// ListWorktrees lists the working trees of the repository: the main one
// first, then the linked ones.
func (r *Repo) ListWorktrees(ctx context.Context) ([]Worktree, error) {
	sep := "\n"
	args := []string{"worktree", "list", "--porcelain"}
	if r.x.atLeast(2, 36) {
		sep = "\x00" // -z: a path may hold a newline
		args = append(args, "-z")
	}
	out, err := r.output(ctx, args...)
	if err != nil {
		return nil, err
	}
	var wts []Worktree
	var cur *Worktree
	for _, f := range strings.Split(string(out), sep) {
		key, val, _ := strings.Cut(f, " ")
		switch key {
		case "":
			cur = nil
		case "worktree":
			wts = append(wts, Worktree{Path: val})
			cur = &wts[len(wts)-1]
		case "HEAD":
			if cur != nil && strings.Trim(val, "0") != "" {
				cur.Head = val
			}
		case "branch":
			if cur != nil {
				cur.Branch = strings.TrimPrefix(val, "refs/heads/")
			}
		case "bare":
			if cur != nil {
				cur.Bare = true
			}
		case "locked":
			if cur != nil {
				cur.Locked = true
			}
		case "prunable":
			if cur != nil {
				cur.Prunable = true
			}
		}
	}
	return wts, nil
}

// AddWorktree returns the linked worktree at path with branch (which
// must exist) checked out, creating it (`git worktree add`) when there is
// none, and whether it created it. An existing worktree of this
// repository at path is reused if it has branch checked out; on another
// branch, or detached, it is an error, as is a path that exists and is
// not a worktree of this repository. Git refuses a branch already checked
// out in another working tree: two working trees never share a branch,
// so N tasks at once use N branches (or AddDetachedWorktree).
func (r *Repo) AddWorktree(ctx context.Context, path, branch string) (*Repo, bool, error) {
	if err := checkRev(branch); err != nil {
		return nil, false, err
	}
	if id, err := r.RefValue(ctx, BranchRef(branch)); err != nil {
		return nil, false, err
	} else if id == "" {
		return nil, false, fmt.Errorf("add worktree %s: branch %s: %w", path, branch, ErrNotFound)
	}
	return r.addWorktree(ctx, path, branch, "")
}

// AddDetachedWorktree is AddWorktree for a worktree whose HEAD is
// detached at commit: an existing one is reused only if it is detached at
// that same commit.
func (r *Repo) AddDetachedWorktree(ctx context.Context, path, commit string) (*Repo, bool, error) {
	id, err := r.ResolveCommit(ctx, commit)
	if err != nil {
		return nil, false, fmt.Errorf("add worktree %s: %w", path, err)
	}
	return r.addWorktree(ctx, path, "", id)
}

func (r *Repo) addWorktree(ctx context.Context, path, branch, commit string) (*Repo, bool, error) {
	abs, wt, err := r.findWorktree(ctx, path)
	if err != nil {
		return nil, false, err
	}
	if wt != nil && wt.Prunable {
		// Registered, but its folder is gone: forget it and make it again.
		if _, err := r.git(ctx, call{}, "worktree", "prune"); err != nil {
			return nil, false, err
		}
		wt = nil
	}
	if wt != nil {
		switch {
		case branch != "" && wt.Branch != branch:
			return nil, false, fmt.Errorf("worktree %s has %s checked out, not branch %s", abs, describeHead(wt), branch)
		case branch == "" && (wt.Branch != "" || wt.Head != commit):
			return nil, false, fmt.Errorf("worktree %s has %s checked out, not commit %s", abs, describeHead(wt), commit)
		}
		w, err := r.openWorktree(wt.Path)
		return w, false, err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, false, fmt.Errorf("add worktree %s: %w", abs, err)
	}
	args := []string{"worktree", "add", "--quiet"}
	if branch != "" {
		args = append(args, abs, branch)
	} else {
		args = append(args, "--detach", abs, commit)
	}
	if _, err := r.git(ctx, call{}, args...); err != nil {
		return nil, false, err
	}
	w, err := r.openWorktree(abs)
	return w, true, err
}

func describeHead(wt *Worktree) string {
	if wt.Branch != "" {
		return "branch " + wt.Branch
	}
	return "a detached HEAD at " + wt.Head
}

// findWorktree returns path made absolute and the worktree registered
// there, or nil. Paths are compared once symbolic links are resolved, as
// far as they exist.
func (r *Repo) findWorktree(ctx context.Context, path string) (string, *Worktree, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", nil, err
	}
	wts, err := r.ListWorktrees(ctx)
	if err != nil {
		return abs, nil, err
	}
	want := realPath(abs)
	for i := range wts {
		if realPath(wts[i].Path) == want {
			return abs, &wts[i], nil
		}
	}
	return abs, nil, nil
}

// realPath is p with symbolic links resolved, p cleaned when it does not
// exist.
func realPath(p string) string {
	if rp, err := filepath.EvalSymlinks(p); err == nil {
		return rp
	}
	return filepath.Clean(p)
}

// RemoveWorktree removes the linked worktree at path: its folder, and
// git's record of it. One with changes or untracked files (Changes) is
// refused unless force. A worktree whose folder is already gone is
// forgotten; a path that is no worktree of the repository is an error.
//
// The changes are looked for by the runner's own hardened status, and git
// is then told --force: without it, `git worktree remove` would run a
// `git status` of its own there, through the worktree's .git file. That
// file is first written back to name the worktree's git dir (relink), for
// git checks that it does before it removes anything.
func (r *Repo) RemoveWorktree(ctx context.Context, path string, force bool) error {
	abs, wt, err := r.findWorktree(ctx, path)
	if err != nil {
		return err
	}
	if wt == nil {
		return fmt.Errorf("remove worktree %s: not a worktree of %s", abs, r.top)
	}
	if _, err := os.Stat(wt.Path); errors.Is(err, fs.ErrNotExist) {
		_, err := r.git(ctx, call{}, "worktree", "prune")
		return err
	}
	w, err := r.openWorktree(wt.Path)
	if err != nil {
		return fmt.Errorf("remove worktree %s: %w", abs, err)
	}
	if !force {
		cs, err := w.Changes(ctx, nil)
		if err != nil {
			return fmt.Errorf("remove worktree %s: %w", abs, err)
		}
		if len(cs) > 0 {
			return fmt.Errorf("remove worktree %s: it has changes or untracked files (%s); remove it with force to lose them", abs, cs[0])
		}
	}
	if err := relink(w.top, w.gitDir); err != nil {
		return err
	}
	_, err = r.git(ctx, call{}, "worktree", "remove", "--force", wt.Path)
	return err
}

// WorktreesSuffix ends the name of the folder, beside the checkout, that
// holds the runner's worktrees of it.
const WorktreesSuffix = ".runner-worktrees"

// DefaultWorktreePath is where the runner keeps its worktree called name
// (characters other than letters, digits, '.', '_' and '-' become '-'):
// <parent>/<checkout>.runner-worktrees/<name>, a folder beside the
// checkout of the repository's main working tree, so that N of them can
// live at once, each outside every other working tree. Not inside the
// checkout, where the person's tools would find its files (a test runner,
// a compiler walking the tree) and the worktree would find the checkout's
// (node_modules, configuration looked up in parent folders); not in the
// git directory, whose ".git" path component makes JavaScript watchers
// and test runners (jest, vite) ignore every file of it.
//
// When the folder beside the checkout does not exist and cannot be made
// there (a read-only parent, as for a checkout at the root of a
// container), it is <user cache dir>/runner/worktrees/<checkout>-<hash of
// the git dir>/<name> instead.
func (r *Repo) DefaultWorktreePath(name string) (string, error) {
	name = strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' {
			return c
		}
		return '-'
	}, name)
	if strings.Trim(name, ".") == "" {
		return "", fmt.Errorf("invalid worktree name %q", name)
	}
	main := filepath.Dir(r.commonDir) // the main working tree, where .git is a folder
	if filepath.Base(r.commonDir) != ".git" {
		main = r.top // a bare repository or a separate git dir
	}
	parent, base := filepath.Dir(main), filepath.Base(main)
	dir := filepath.Join(parent, base+WorktreesSuffix)
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return filepath.Join(dir, name), nil
	}
	if unix.Access(parent, unix.W_OK|unix.X_OK) == nil {
		return filepath.Join(dir, name), nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no place for worktrees: %s is not writable and %w", parent, err)
	}
	sum := sha256.Sum256([]byte(r.commonDir))
	return filepath.Join(cache, "runner", "worktrees", base+"-"+hex.EncodeToString(sum[:4]), name), nil
}

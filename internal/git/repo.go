package git

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

var (
	// ErrNoGit: no usable git program (not on PATH, or older than 2.25).
	// The error says which, and why.
	ErrNoGit = errors.New("git is not available")
	// ErrNotRepo: the directory is not inside the working tree of a git
	// repository (outside any, or inside a .git folder or a bare
	// repository).
	ErrNotRepo = errors.New("not inside a git working tree")
	// ErrUnborn: HEAD names a branch without any commit yet (a fresh
	// `git init`); there is nothing to branch from.
	ErrUnborn = errors.New("the repository has no commit yet")
	// ErrNotFound: a revision or ref that does not exist.
	ErrNotFound = errors.New("no such revision")
)

// MinVersion is the oldest git the package works with (porcelain v2
// status, worktree, update-ref --stdin); MinVersionParallel
// the oldest that integrates tasks of parallel slots (merge-tree
// --write-tree). `runner doctor` checks the machine against them.
var (
	MinVersion         = [2]int{2, 25}
	MinVersionParallel = [2]int{2, 38}
)

// Options configure how a Repo runs git. The zero value is ready to use.
type Options struct {
	// Timeout bounds every git call (DefaultTimeout when zero). A call
	// that runs out of time is stopped (SIGTERM, then SIGKILL) and its
	// error matches ErrTimeout and names the call.
	Timeout time.Duration
	// Git is the git program ("" = "git", looked up in $PATH).
	Git string
	// Env is the environment git runs in (nil = the runner's own). It is
	// cleaned either way; see cleanEnv.
	Env []string
}

// Repo is one working tree of a git repository: the checkout, or a
// linked worktree. Its methods run git there.
type Repo struct {
	x         *exe
	opts      Options
	top       string // the top level of the working tree
	gitDir    string // this working tree's git dir (.git, or .git/worktrees/<name>)
	commonDir string // the repository's shared git dir (.git)

	identMu  sync.Mutex
	ident    *Identity
	identEnv []string

	pendingMu sync.Mutex
	pending   *tempIndex // the last Snapshot's index, for AdvanceHead

	driversMu sync.Mutex
	drivers   *driverCache // the overrides of the configuration's drivers

	// The repository format extensions a transport directory copies
	// (remote.go), read once.
	extOnce sync.Once
	ext     []override
	extErr  error
}

// Top is the absolute top-level folder of the working tree.
func (r *Repo) Top() string { return r.top }

// GitDir is the working tree's own git folder: .git for the checkout,
// .git/worktrees/<name> for a linked worktree. Its index and HEAD are
// there.
func (r *Repo) GitDir() string { return r.gitDir }

// CommonDir is the git folder that all working trees of the repository
// share: objects, refs, config.
func (r *Repo) CommonDir() string { return r.commonDir }

// Open finds the repository whose working tree holds dir (dir itself or a
// folder above it). The error is ErrNoGit when git cannot be run, or is
// too old, and ErrNotRepo when dir is not in a working tree; both say why.
// A repository without any commit opens; what needs a commit then fails
// with ErrUnborn.
func Open(ctx context.Context, dir string, o Options) (*Repo, error) {
	x, err := newExe(ctx, o)
	if err != nil {
		return nil, err
	}
	return x.open(ctx, dir, o)
}

func (x *exe) open(ctx context.Context, dir string, o Options) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open git repository at %s: %w", dir, err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		if err == nil {
			err = errors.New("not a directory")
		}
		return nil, fmt.Errorf("open git repository at %s: %w", dir, err)
	}
	res, err := x.run(ctx, call{dir: abs}, "rev-parse", "--is-inside-work-tree", "--show-toplevel", "--absolute-git-dir", "--git-common-dir")
	if err != nil {
		var ge *Error
		if errors.As(err, &ge) && ge.ExitCode == 128 &&
			(strings.Contains(ge.Stderr, "not a git repository") || strings.Contains(ge.Stderr, "must be run in a work tree")) {
			return nil, fmt.Errorf("%w: %s (%s)", ErrNotRepo, dir, firstLine(ge.Stderr))
		}
		return nil, err
	}
	l := lines(res.out)
	if len(l) != 4 || l[0] != "true" {
		if len(l) > 0 && l[0] == "false" {
			return nil, fmt.Errorf("%w: %s", ErrNotRepo, dir)
		}
		return nil, fmt.Errorf("open git repository at %s: unexpected output of git rev-parse: %q", dir, res.out)
	}
	common := l[3]
	if !filepath.IsAbs(common) {
		common = filepath.Join(abs, common)
	}
	r := &Repo{x: x, opts: o, top: l[1], gitDir: l[2], commonDir: filepath.Clean(common)}
	r.removeStaleIndexes()
	return r, nil
}

// newExe finds git and checks its version; the environment is cleaned.
func newExe(ctx context.Context, o Options) (*exe, error) {
	x, err := findGit(o)
	if err != nil {
		return nil, err
	}
	v, err := x.gitVersion(ctx)
	if err != nil {
		return nil, err
	}
	x.version = v
	return x, nil
}

// findGit finds the git program of o, its environment cleaned, its
// version not yet known.
func findGit(o Options) (*exe, error) {
	name := o.Git
	if name == "" {
		name = "git"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoGit, err)
	}
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	x := &exe{path: path, env: cleanEnv(env), timeout: o.Timeout}
	if x.timeout <= 0 {
		x.timeout = DefaultTimeout
	}
	return x, nil
}

// versions caches the version of each git program by path: Open runs
// once per working tree.
var versions sync.Map // path -> [2]int

func (x *exe) gitVersion(ctx context.Context) ([2]int, error) {
	if v, ok := versions.Load(x.path); ok {
		return v.([2]int), nil
	}
	res, err := x.run(ctx, call{}, "version")
	if err != nil {
		return [2]int{}, fmt.Errorf("%w: %w", ErrNoGit, err)
	}
	v, ok := ParseVersion(string(res.out))
	if !ok {
		return [2]int{}, fmt.Errorf("%w: cannot read the version of %s in %q", ErrNoGit, x.path, strings.TrimSpace(string(res.out)))
	}
	if v[0] < MinVersion[0] || v[0] == MinVersion[0] && v[1] < MinVersion[1] {
		return [2]int{}, fmt.Errorf("%w: %s is version %d.%d; %d.%d or later is needed", ErrNoGit, x.path, v[0], v[1], MinVersion[0], MinVersion[1])
	}
	versions.Store(x.path, v)
	return v, nil
}

// ParseVersion reads "git version 2.39.5" (with whatever follows, as in
// "2.39.3 (Apple Git-146)" or "2.45.1.windows.1").
func ParseVersion(s string) ([2]int, bool) {
	s, ok := strings.CutPrefix(strings.TrimSpace(s), "git version ")
	if !ok {
		return [2]int{}, false
	}
	f := strings.SplitN(s, ".", 3)
	if len(f) < 2 {
		return [2]int{}, false
	}
	major, err1 := strconv.Atoi(f[0])
	minor, err2 := strconv.Atoi(strings.TrimFunc(f[1], func(r rune) bool { return r < '0' || r > '9' }))
	if err1 != nil || err2 != nil {
		return [2]int{}, false
	}
	return [2]int{major, minor}, true
}

// atLeast reports whether git is at least version major.minor.
func (x *exe) atLeast(major, minor int) bool {
	return x.version[0] > major || x.version[0] == major && x.version[1] >= minor
}

// firstLine is the first line of s.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// git runs a git command in the working tree: with its git dir and
// working tree named explicitly (repoEnv), and the drivers of the
// configuration neutralised (overrides).
func (r *Repo) git(ctx context.Context, c call, args ...string) (result, error) {
	vars, cfg, err := r.overrides(ctx)
	if err != nil {
		return result{}, err
	}
	r.locate(&c)
	if len(vars) > 0 {
		c.env = slices.Concat(vars, c.env)
	}
	c.config = cfg
	return r.x.run(ctx, c, args...)
}

// locate makes c run in the working tree, with the repository named
// explicitly; what the caller put in c.env comes after, and wins.
func (r *Repo) locate(c *call) {
	if c.dir == "" {
		c.dir = r.top
	}
	c.env = append(r.repoEnv(), c.env...)
}

// output runs a git command in the working tree and returns its stdout.
func (r *Repo) output(ctx context.Context, args ...string) ([]byte, error) {
	res, err := r.git(ctx, call{}, args...)
	return res.out, err
}

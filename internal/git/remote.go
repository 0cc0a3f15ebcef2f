package git

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"
)

// The runner's git calls never talk to another repository
// (protocol.allow=never, harden.go) but these: with [engine] (SPEC §22)
// the coordinator and its workers exchange checkpoints and results
// through the one remote the run's config names, given here by URL or
// path, never by a remote's name from a configuration an agent could
// have written. Hooks stay off (pre-push, reference-transaction).

// remoteTimeout bounds a fetch or a push: they move a whole checkpoint
// the first time.
const remoteTimeout = 10 * time.Minute

// remoteCall is a call allowed to reach remote.
func remoteCall(remote string) ([]string, error) {
	if remote == "" || strings.HasPrefix(remote, "-") {
		return nil, fmt.Errorf("the git remote %q is not a URL or a path", remote)
	}
	return []string{"-c", "protocol.allow=always"}, nil
}

// Push sends refspecs to remote. A refspec without "+" is refused by
// the remote when it would not be a fast-forward (or the ref exists and
// is not a commit's ancestor): what one side wrote the other cannot
// overwrite by mistake.
func (r *Repo) Push(ctx context.Context, remote string, refspecs ...string) error {
	pre, err := remoteCall(remote)
	if err != nil {
		return err
	}
	args := append(append(pre, "push", "--quiet", "--no-verify", "--porcelain", remote), refspecs...)
	if _, err := r.git(ctx, call{timeout: remoteTimeout}, args...); err != nil {
		return fmt.Errorf("push to %s: %w", remote, err)
	}
	return nil
}

// Fetch gets refspecs from remote into this repository.
func (r *Repo) Fetch(ctx context.Context, remote string, refspecs ...string) error {
	pre, err := remoteCall(remote)
	if err != nil {
		return err
	}
	args := append(append(pre, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", remote), refspecs...)
	if _, err := r.git(ctx, call{timeout: remoteTimeout}, args...); err != nil {
		return fmt.Errorf("fetch from %s: %w", remote, err)
	}
	return nil
}

// Reach checks that remote answers as a git repository, listing no more
// than the refs under prefix (none, the first time).
func (r *Repo) Reach(ctx context.Context, remote, prefix string) error {
	pre, err := remoteCall(remote)
	if err != nil {
		return err
	}
	args := append(pre, "ls-remote", "--quiet", remote, prefix+"*")
	if _, err := r.git(ctx, call{timeout: time.Minute}, args...); err != nil {
		return fmt.Errorf("reach %s: %w", remote, err)
	}
	return nil
}

// RemoteRef is the commit ref names on remote; "" when remote has no such
// ref.
func (r *Repo) RemoteRef(ctx context.Context, remote, ref string) (string, error) {
	pre, err := remoteCall(remote)
	if err != nil {
		return "", err
	}
	res, err := r.git(ctx, call{timeout: time.Minute}, append(pre, "ls-remote", "--quiet", remote, ref)...)
	if err != nil {
		return "", fmt.Errorf("ask %s for %s: %w", remote, ref, err)
	}
	for _, l := range lines(res.out) {
		if id, name, ok := strings.Cut(l, "\t"); ok && name == ref {
			return id, nil
		}
	}
	return "", nil
}

// RefsUnder lists the refs whose names begin with prefix.
func (r *Repo) RefsUnder(ctx context.Context, prefix string) ([]string, error) {
	out, err := r.output(ctx, "for-each-ref", "--format=%(refname)", prefix)
	if err != nil {
		return nil, err
	}
	return lines(out), nil
}

// Init makes dir a repository with no commit (when it is not one
// already) and opens it: a worker's store of the objects it fetches,
// its working trees linked worktrees of it.
func Init(ctx context.Context, dir string, o Options) (*Repo, error) {
	x, err := newExe(ctx, o)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if _, err := x.run(ctx, call{dir: dir}, "init", "--quiet", "."); err != nil {
		return nil, fmt.Errorf("git init %s: %w", dir, err)
	}
	return x.open(ctx, dir, o)
}

// PruneWorktrees forgets the linked worktrees whose folders are gone.
func (r *Repo) PruneWorktrees(ctx context.Context) error {
	_, err := r.git(ctx, call{}, "worktree", "prune")
	return err
}

package git

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The runner's git calls never talk to another repository
// (protocol.allow=never, harden.go) but these: with [engine] (SPEC §22)
// the coordinator and its workers exchange checkpoints and results
// through the one remote the run's config names, given here by URL or
// path, never by a remote's name from a configuration an agent could
// have written.
//
// Such a call runs from a git directory of its own (transportDir), not
// the repository's: it shares the repository's objects and refs, but
// its configuration is the package's, so nothing of the repository's
// configuration applies to it: no url.<base>.insteadOf or
// pushInsteadOf that would send it elsewhere (to an ext:: command, say),
// no core.sshCommand, credential helper or core.gitProxy that would run
// a program. The global configuration (the person's) still applies, as
// to every call. Only the transports that run no program of the URL's
// choosing are allowed: file, git, ssh, http and https; never ext:: or
// fd::. Hooks stay off (pre-push, reference-transaction).

// remoteTimeout bounds a fetch or a push: they move a whole checkpoint
// the first time.
const remoteTimeout = 10 * time.Minute

// remoteConfig are the -c options of a call that talks to a remote: they
// come after every other and win over them.
var remoteConfig = []string{
	"-c", "protocol.file.allow=always", "-c", "protocol.git.allow=always", "-c", "protocol.ssh.allow=always",
	"-c", "protocol.http.allow=always", "-c", "protocol.https.allow=always",
	"-c", "protocol.ext.allow=never", "-c", "protocol.fd.allow=never",
}

// checkRemote refuses a remote that is no URL or path, or that names a
// transport running a program (ext::, fd::).
func checkRemote(remote string) error {
	low := strings.ToLower(remote)
	switch {
	case remote == "" || strings.HasPrefix(remote, "-"):
		return fmt.Errorf("the git remote %q is not a URL or a path", remote)
	case strings.HasPrefix(low, "ext::") || strings.HasPrefix(low, "fd::"):
		return fmt.Errorf("the git remote %q uses a transport that runs a program (ext::, fd::), which the runner never allows", remote)
	}
	return nil
}

// remote runs a git call that talks to remote, from a transport
// directory of the repository's (transportDir).
func (r *Repo) remote(ctx context.Context, remote string, timeout time.Duration, args ...string) (result, error) {
	if err := checkRemote(remote); err != nil {
		return result{}, err
	}
	vars, cfg, err := r.overrides(ctx)
	if err != nil {
		return result{}, err
	}
	dir, err := r.transportDir(ctx)
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	c := call{dir: dir, timeout: timeout, config: append(slices.Clip(cfg), remoteConfig...),
		env: append(slices.Clip(vars), "GIT_DIR="+dir, "GIT_OBJECT_DIRECTORY="+filepath.Join(r.commonDir, "objects"))}
	return r.x.run(ctx, c, args...)
}

// transportDir makes a git directory whose configuration is the
// package's own and whose refs (and packed refs, shallow file, reftable)
// are the repository's, by links: a fetch writes the repository's refs,
// a push reads its objects (through GIT_OBJECT_DIRECTORY), and neither
// reads the repository's configuration. The caller removes it.
func (r *Repo) transportDir(ctx context.Context) (string, error) {
	ext, err := r.extensions(ctx)
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "runner-git-remote-")
	if err != nil {
		return "", err
	}
	config := "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
	if len(ext) > 0 {
		config = "[core]\n\trepositoryformatversion = 1\n\tbare = true\n[extensions]\n"
		for _, e := range ext {
			config += "\t" + e.key + " = " + e.value + "\n"
		}
	}
	err = errors.Join(
		os.WriteFile(filepath.Join(dir, "config"), []byte(config), 0o600),
		os.WriteFile(filepath.Join(dir, "HEAD"), []byte("ref: refs/heads/runner-transport\n"), 0o600),
		os.Mkdir(filepath.Join(dir, "objects"), 0o700))
	for _, name := range []string{"refs", "packed-refs", "shallow", "reftable"} {
		target := filepath.Join(r.commonDir, name)
		if _, serr := os.Lstat(target); serr == nil {
			err = errors.Join(err, os.Symlink(target, filepath.Join(dir, name)))
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("make a transport directory for the git remote: %w", err)
	}
	return dir, nil
}

// extensions are the repository format extensions a transport directory
// needs to read the repository's objects and refs: its object format
// and ref storage, when they are not git's defaults.
func (r *Repo) extensions(ctx context.Context) ([]override, error) {
	r.extOnce.Do(func() {
		res, err := r.x.run(ctx, call{ok: []int{1}}, "config", "--file", filepath.Join(r.commonDir, "config"), "--get-regexp", `^extensions\.(objectformat|refstorage)$`)
		if err != nil {
			r.extErr = fmt.Errorf("read the repository's format: %w", err)
			return
		}
		for _, l := range lines(res.out) {
			if k, v, ok := strings.Cut(l, " "); ok && !strings.ContainsAny(v, "\n\"\\") {
				r.ext = append(r.ext, override{k, v})
			}
		}
	})
	return r.ext, r.extErr
}

// Push sends refspecs to remote. A refspec without "+" is refused by
// the remote when it would not be a fast-forward (or the ref exists and
// is not a commit's ancestor): what one side wrote the other cannot
// overwrite by mistake.
func (r *Repo) Push(ctx context.Context, remote string, refspecs ...string) error {
	args := append([]string{"push", "--quiet", "--no-verify", "--porcelain", remote}, refspecs...)
	if _, err := r.remote(ctx, remote, remoteTimeout, args...); err != nil {
		return fmt.Errorf("push to %s: %w", remote, err)
	}
	return nil
}

// Fetch gets refspecs from remote into this repository.
func (r *Repo) Fetch(ctx context.Context, remote string, refspecs ...string) error {
	args := append([]string{"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", remote}, refspecs...)
	if _, err := r.remote(ctx, remote, remoteTimeout, args...); err != nil {
		return fmt.Errorf("fetch from %s: %w", remote, err)
	}
	return nil
}

// Reach checks that remote answers as a git repository, listing no more
// than the refs under prefix (none, the first time).
func (r *Repo) Reach(ctx context.Context, remote, prefix string) error {
	if _, err := r.remote(ctx, remote, time.Minute, "ls-remote", "--quiet", remote, prefix+"*"); err != nil {
		return fmt.Errorf("reach %s: %w", remote, err)
	}
	return nil
}

// RemoteRef is the commit ref names on remote; "" when remote has no such
// ref.
func (r *Repo) RemoteRef(ctx context.Context, remote, ref string) (string, error) {
	res, err := r.remote(ctx, remote, time.Minute, "ls-remote", "--quiet", remote, ref)
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

package git

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrRefChanged is matched (errors.Is) by the *RefChangedError of a
// compare-and-swap that found the ref elsewhere than expected.
var ErrRefChanged = errors.New("ref changed")

// RefChangedError is an UpdateRef or DeleteRef that did nothing because
// the ref was not at the expected value: someone else moved it (an agent
// that committed, another runner, a person).
type RefChangedError struct {
	Ref      string
	Expected string // "" = expected not to exist
	Actual   string // "" = does not exist
}

func (e *RefChangedError) Error() string {
	switch {
	case e.Expected == "":
		return fmt.Sprintf("%s already exists (at %s)", e.Ref, e.Actual)
	case e.Actual == "":
		return fmt.Sprintf("%s does not exist (expected at %s)", e.Ref, e.Expected)
	}
	return fmt.Sprintf("%s is at %s, not at %s", e.Ref, e.Actual, e.Expected)
}

func (e *RefChangedError) Unwrap() error { return ErrRefChanged }

// BranchRef is the full ref name of branch name: refs/heads/<name>.
func BranchRef(name string) string { return "refs/heads/" + name }

// checkRev refuses a revision that git would read as an option.
func checkRev(rev string) error {
	if rev == "" || strings.HasPrefix(rev, "-") {
		return fmt.Errorf("invalid revision %q", rev)
	}
	return nil
}

// checkRef refuses what is not a full ref name (refs/...) or HEAD, so
// that no file is ever made at the top of the git directory.
func checkRef(ref string) error {
	if ref != "HEAD" && !strings.HasPrefix(ref, "refs/") {
		return fmt.Errorf("invalid ref %q: a full ref name (refs/...) is needed", ref)
	}
	return nil
}

// resolve returns the object rev names, peeled to kind ("commit", "tree"
// or "" for none), or ErrNotFound.
func (r *Repo) resolve(ctx context.Context, rev, kind string) (string, error) {
	if err := checkRev(rev); err != nil {
		return "", err
	}
	arg := rev
	if kind != "" {
		arg += "^{" + kind + "}"
	}
	res, err := r.git(ctx, call{ok: []int{1}}, "rev-parse", "-q", "--verify", arg)
	if err != nil {
		return "", err
	}
	if res.code != 0 {
		return "", fmt.Errorf("%w: %s", ErrNotFound, arg)
	}
	return strings.TrimSpace(string(res.out)), nil
}

// ResolveCommit returns the commit that rev names (a commit id, a branch,
// a ref, HEAD...), or an error matching ErrNotFound.
func (r *Repo) ResolveCommit(ctx context.Context, rev string) (string, error) {
	return r.resolve(ctx, rev, "commit")
}

// TreeOf returns the tree of a commit (or the tree itself).
func (r *Repo) TreeOf(ctx context.Context, rev string) (string, error) {
	return r.resolve(ctx, rev, "tree")
}

// RefValue returns the object a ref points to, "" when it does not exist.
func (r *Repo) RefValue(ctx context.Context, ref string) (string, error) {
	if err := checkRef(ref); err != nil {
		return "", err
	}
	id, err := r.resolve(ctx, ref, "")
	if errors.Is(err, ErrNotFound) {
		return "", nil
	}
	return id, err
}

// BranchHead returns the commit the branch named branch points to in the
// repository whose working tree holds dir, "" when there is no such
// branch: a reader's look (`runner status`), in one git call, without
// Open's version check and probe of the repository. The error matches
// ErrNoGit when git is not on PATH, and is an *Error when git failed (dir
// in no repository, a timeout).
func BranchHead(ctx context.Context, dir, branch string, o Options) (string, error) {
	x, err := findGit(o)
	if err != nil {
		return "", err
	}
	res, err := x.run(ctx, call{dir: dir, ok: []int{1}}, "rev-parse", "-q", "--verify", BranchRef(branch)+"^{commit}")
	if err != nil || res.code != 0 {
		return "", err
	}
	return strings.TrimSpace(string(res.out)), nil
}

// HeadCommit returns the commit checked out in the working tree, or
// ErrUnborn when its branch has no commit yet.
func (r *Repo) HeadCommit(ctx context.Context) (string, error) {
	id, err := r.resolve(ctx, "HEAD", "commit")
	if errors.Is(err, ErrNotFound) {
		return "", ErrUnborn
	}
	return id, err
}

// CurrentBranch returns the branch checked out in the working tree
// ("main", not "refs/heads/main"), also when it has no commit yet; ""
// when HEAD is detached.
func (r *Repo) CurrentBranch(ctx context.Context) (string, error) {
	res, err := r.git(ctx, call{ok: []int{1}}, "symbolic-ref", "-q", "HEAD")
	if err != nil || res.code != 0 {
		return "", err
	}
	ref := strings.TrimSpace(string(res.out))
	name, ok := strings.CutPrefix(ref, "refs/heads/")
	if !ok {
		return "", fmt.Errorf("HEAD points to %q, not to a branch", ref)
	}
	return name, nil
}

// UpdateRef sets ref (a full name: refs/heads/x, refs/runner/...) to
// newID if, and only if, it is at oldID now; oldID "" means it must not
// exist yet. Both are full object names. The check and the update are one
// atomic step of git's (update-ref with an old value). When the ref is
// elsewhere, nothing changes and the error is a *RefChangedError (matching
// ErrRefChanged) saying where it is.
func (r *Repo) UpdateRef(ctx context.Context, ref, newID, oldID string) error {
	if err := checkRef(ref); err != nil {
		return err
	}
	if err := checkRev(newID); err != nil {
		return err
	}
	_, err := r.git(ctx, call{}, "update-ref", "-m", "runner", ref, newID, oldID)
	return r.refError(ctx, ref, oldID, err)
}

// DeleteRef removes ref if it is at oldID ("" = wherever it is); a ref
// already gone is not an error when oldID is "".
func (r *Repo) DeleteRef(ctx context.Context, ref, oldID string) error {
	if err := checkRef(ref); err != nil {
		return err
	}
	args := []string{"update-ref", "-m", "runner", "-d", ref}
	if oldID != "" {
		args = append(args, oldID)
	}
	_, err := r.git(ctx, call{}, args...)
	if err != nil && oldID == "" {
		if cur, rerr := r.RefValue(ctx, ref); rerr == nil && cur == "" {
			return nil
		}
	}
	return r.refError(ctx, ref, oldID, err)
}

// refError turns the failure of a compare-and-swap into a
// *RefChangedError when the ref is indeed not at the value expected; git's
// message for it varies between versions, the ref's value does not.
func (r *Repo) refError(ctx context.Context, ref, oldID string, err error) error {
	if err == nil {
		return nil
	}
	cur, rerr := r.RefValue(ctx, ref)
	if rerr == nil && cur != oldID {
		return &RefChangedError{Ref: ref, Expected: oldID, Actual: cur}
	}
	return err
}

// EnsureBranch makes sure branch name exists: an existing one is left
// where it is; a missing one is created at the commit from names (HEAD
// when from is ""), only if nobody created it in the meantime (update-ref
// with an empty old value). It returns the branch's commit and whether it
// created the branch. No other branch is moved, nor the checkout touched.
// With from "" in a repository without any commit, the error is ErrUnborn.
func (r *Repo) EnsureBranch(ctx context.Context, name, from string) (commit string, created bool, err error) {
	ref := BranchRef(name)
	if id, err := r.RefValue(ctx, ref); err != nil || id != "" {
		return id, false, err
	}
	if from == "" {
		commit, err = r.HeadCommit(ctx)
	} else {
		commit, err = r.ResolveCommit(ctx, from)
	}
	if err != nil {
		return "", false, fmt.Errorf("create branch %s: %w", name, err)
	}
	err = r.UpdateRef(ctx, ref, commit, "")
	var rc *RefChangedError
	if errors.As(err, &rc) && rc.Actual != "" {
		return rc.Actual, false, nil // created by someone else meanwhile
	}
	if err != nil {
		return "", false, fmt.Errorf("create branch %s: %w", name, err)
	}
	return commit, true, nil
}

// SwitchBranch checks out the existing branch name in this working tree
// (git checkout): HEAD then points to it, and the files and the index are
// updated from the current commit to the branch's, keeping local changes
// that do not conflict (git refuses the switch when one would be lost).
// No branch moves. Git also refuses a branch checked out in another
// working tree. The caller refuses a working tree with changes first
// (Changes): the person's uncommitted work must not follow the runner to
// its branch.
func (r *Repo) SwitchBranch(ctx context.Context, name string) error {
	if err := checkRev(name); err != nil {
		return err
	}
	if id, err := r.RefValue(ctx, BranchRef(name)); err != nil {
		return err
	} else if id == "" {
		return fmt.Errorf("switch to branch %s: %w", name, ErrNotFound)
	}
	// "--" after the name: a file of the same name is no pathspec. The
	// local branch exists, so checkout guesses no remote branch.
	_, err := r.git(ctx, call{}, "checkout", "-q", name, "--")
	return err
}

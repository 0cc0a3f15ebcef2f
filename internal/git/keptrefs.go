package git

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Ref is a ref and the commit it points to, with that commit's time.
type Ref struct {
	Name   string
	Commit string
	Time   time.Time // the committer's date; zero when the object is no commit
}

// ListRefs lists the refs whose names begin with prefix (refs/runner/),
// each with its commit and the commit's date.
func (r *Repo) ListRefs(ctx context.Context, prefix string) ([]Ref, error) {
	if err := checkRef(prefix); err != nil {
		return nil, err
	}
	out, err := r.output(ctx, "for-each-ref", "--format=%(refname)%00%(objectname)%00%(committerdate:unix)", prefix)
	if err != nil {
		return nil, err
	}
	var refs []Ref
	for _, l := range lines(out) {
		f := strings.Split(l, "\x00")
		if len(f) != 3 {
			continue
		}
		ref := Ref{Name: f[0], Commit: f[1]}
		if sec, err := strconv.ParseInt(f[2], 10, 64); err == nil {
			ref.Time = time.Unix(sec, 0)
		}
		refs = append(refs, ref)
	}
	return refs, nil
}

// DeleteRefs deletes each ref that still points to its commit, in one
// transaction (`git update-ref --stdin`); when the transaction fails
// (one moved meanwhile), each is deleted on its own, and those that
// moved are left: they are returned. No other ref is touched.
func (r *Repo) DeleteRefs(ctx context.Context, refs []Ref) (moved []Ref, err error) {
	if len(refs) == 0 {
		return nil, nil
	}
	var in strings.Builder
	for _, ref := range refs {
		if err := checkRef(ref.Name); err != nil {
			return nil, err
		}
		if err := checkRev(ref.Commit); err != nil {
			return nil, err
		}
		fmt.Fprintf(&in, "delete %s %s\n", ref.Name, ref.Commit)
	}
	if _, err := r.git(ctx, call{stdin: []byte(in.String())}, "update-ref", "-m", "runner", "--stdin"); err == nil {
		return nil, nil
	}
	for _, ref := range refs {
		err := r.DeleteRef(ctx, ref.Name, ref.Commit)
		if errors.Is(err, ErrRefChanged) {
			moved = append(moved, ref)
			continue
		}
		if err != nil {
			return moved, err
		}
	}
	return moved, nil
}

// RemoteURL is where the repository's configuration sends a push to the
// remote called name: its pushurl, else its url; "" when there is no
// such remote.
func (r *Repo) RemoteURL(ctx context.Context, name string) (string, error) {
	if name == "" || strings.HasPrefix(name, "-") || strings.ContainsAny(name, " \n\t") {
		return "", fmt.Errorf("invalid remote name %q", name)
	}
	for _, key := range []string{"remote." + name + ".pushurl", "remote." + name + ".url"} {
		res, err := r.git(ctx, call{ok: []int{1}}, "config", "--get", key)
		if err != nil {
			return "", err
		}
		if v := strings.TrimSpace(string(res.out)); res.code == 0 && v != "" {
			return v, nil
		}
	}
	return "", nil
}

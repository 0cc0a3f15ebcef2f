package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// RestorePaths puts each of paths (relative to the top of the working
// tree, with "/") in the files as commit has it, streaming its content
// from git, or removes it where commit has no such file; neither the
// index nor HEAD changes. What was there is replaced: keep it first.
func (r *Repo) RestorePaths(ctx context.Context, commit string, paths []string) error {
	if err := checkRev(commit); err != nil {
		return err
	}
	var errs []error
	for _, p := range paths {
		if err := r.restorePath(ctx, commit, p); err != nil {
			errs = append(errs, fmt.Errorf("put %s back as %s has it: %w", p, shortID(commit), err))
		}
	}
	return errors.Join(errs...)
}

func (r *Repo) restorePath(ctx context.Context, commit, p string) error {
	dst := filepath.Join(r.top, filepath.FromSlash(p))
	out, err := r.output(ctx, "ls-tree", "-z", commit, "--", literalPaths([]string{p})[0])
	if err != nil {
		return err
	}
	// "<mode> <type> <object>\t<path>\0"
	meta, _, found := bytes.Cut(out, []byte{'\t'})
	fields := bytes.Fields(meta)
	if !found || len(fields) != 3 || string(fields[1]) != "blob" {
		if err := os.RemoveAll(dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	mode, blob := string(fields[0]), string(fields[2])
	if fi, err := os.Lstat(dst); err == nil && fi.IsDir() {
		if err := os.RemoveAll(dst); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp := dst + ".runner-restore"
	os.Remove(tmp)
	if mode == "120000" {
		target, err := r.output(ctx, "cat-file", "blob", blob)
		if err != nil {
			return err
		}
		if err := os.Symlink(string(target), tmp); err != nil {
			return err
		}
		return os.Rename(tmp, dst)
	}
	perm := os.FileMode(0o644)
	if mode == "100755" {
		perm = 0o755
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = r.git(ctx, call{stdout: f}, "cat-file", "blob", blob)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, perm)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, dst)
}

// TreeFiles reports which of paths are files (blobs or links) in rev, a
// commit or a tree.
func (r *Repo) TreeFiles(ctx context.Context, rev string, paths []string) (map[string]bool, error) {
	if err := checkRev(rev); err != nil {
		return nil, err
	}
	found := make(map[string]bool, len(paths))
	if len(paths) == 0 {
		return found, nil
	}
	args := append([]string{"ls-tree", "-r", "-z", "--name-only", rev, "--"}, literalPaths(paths)...)
	out, err := r.output(ctx, args...)
	if err != nil {
		return nil, err
	}
	for _, p := range bytes.Split(bytes.TrimSuffix(out, []byte{0}), []byte{0}) {
		if len(p) > 0 {
			found[string(p)] = true
		}
	}
	return found, nil
}

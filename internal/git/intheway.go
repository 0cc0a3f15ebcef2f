package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"syscall"
)

// InTheWay returns what a move of a working tree from commit from (its
// index at from) to commit to would overwrite or remove that git does not
// track: files, ignored ones included, and folders, at a path to adds, or
// where to needs a folder. Git's own moves (checkout, read-tree -m -u)
// refuse to overwrite an untracked file but replace an ignored one, and
// remove an ignored folder where a file goes, without a word: a person's
// `.env` or `localdata/`. The result is sorted, relative to the top of the
// working tree, with "/"; nil when nothing is in the way.
//
// How: `git diff-tree` names the paths to adds and the ones it deletes
// (from's own files); each added path, and each folder above it, that
// exists in the working tree as what the move cannot leave there is in
// the way, unless from tracks it. Nothing else of the working tree is
// read.
func (r *Repo) InTheWay(ctx context.Context, from, to string) ([]string, error) {
	if err := checkRev(from); err != nil {
		return nil, err
	}
	if err := checkRev(to); err != nil {
		return nil, err
	}
	out, err := r.output(ctx, "diff-tree", "-r", "-z", "--no-renames", "--name-status", "--diff-filter=AD", from, to, "--")
	if err != nil {
		return nil, fmt.Errorf("what is in the way from %s to %s in %s: %w", from, to, r.top, err)
	}
	fields := bytes.Split(bytes.TrimSuffix(out, []byte{0}), []byte{0})
	var added []string
	deleted := map[string]bool{}
	for i := 0; i+1 < len(fields); i += 2 {
		p := string(fields[i+1])
		if string(fields[i]) == "A" {
			added = append(added, p)
		} else {
			deleted[p] = true
		}
	}
	found := map[string]bool{}
	for _, p := range added {
		if _, err := os.Lstat(filepath.Join(r.top, filepath.FromSlash(p))); err == nil {
			found[p] = true
		} else if !errors.Is(err, fs.ErrNotExist) && !isNotDir(err) {
			return nil, fmt.Errorf("what is in the way from %s to %s: %w", from, to, err)
		}
		// A file where to needs a folder.
		for dir := path.Dir(p); dir != "." && !found[dir]; dir = path.Dir(dir) {
			fi, err := os.Lstat(filepath.Join(r.top, filepath.FromSlash(dir)))
			if err != nil || fi.IsDir() {
				continue
			}
			if !deleted[dir] {
				found[dir] = true
			}
			break
		}
	}
	if len(found) == 0 {
		return nil, nil
	}
	list := make([]string, 0, len(found))
	for p := range found {
		list = append(list, p)
	}
	sort.Strings(list)
	return list, nil
}

// isNotDir reports an error of a path one of whose folders is a file.
func isNotDir(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && errors.Is(pe.Err, syscall.ENOTDIR)
}

// KeepFiles keeps what the working tree holds at paths (files or folders,
// ignored ones included, as from InTheWay) as a commit of base's tree with
// them added, under KeptPrefix+name, before a move replaces them. It
// returns the commit.
func (r *Repo) KeepFiles(ctx context.Context, name, base string, paths []string, m Message) (string, error) {
	if len(paths) == 0 {
		return "", errors.New("keep files: no paths")
	}
	if err := checkRev(base); err != nil {
		return "", err
	}
	idx, err := r.newTempIndex(false)
	if err != nil {
		return "", err
	}
	defer idx.remove()
	env := call{env: []string{"GIT_INDEX_FILE=" + idx.path}}
	if _, err := r.git(ctx, env, "-c", "core.splitIndex=false", "read-tree", base); err != nil {
		return "", fmt.Errorf("keep files in %s: %w", r.top, err)
	}
	var specs bytes.Buffer
	for _, p := range literalPaths(paths) {
		specs.WriteString(p)
		specs.WriteByte(0)
	}
	add := call{env: env.env, stdin: specs.Bytes()}
	if _, err := r.git(ctx, add, "-c", "core.splitIndex=false", "add", "--force", "--all", "--pathspec-from-file=-", "--pathspec-file-nul"); err != nil {
		return "", fmt.Errorf("keep files in %s: %w", r.top, err)
	}
	tree, err := r.git(ctx, env, "write-tree")
	if err != nil {
		return "", fmt.Errorf("keep files in %s: %w", r.top, err)
	}
	return r.Keep(ctx, name, string(bytes.TrimSpace(tree.out)), base, m)
}

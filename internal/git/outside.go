package git

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Outside lists what the working tree holds that a snapshot leaves out
// (SPEC §20): ignored files, ignored folders (each once, "node_modules/",
// not what is inside; an untracked folder holding only ignored files is
// one of them), and untracked folders that are repositories of their own
// ("vendor/lib/"), minus the paths under exclude (as for Changes), sorted,
// none under another. Paths are relative to the top, with slashes; a folder ends
// with "/". Nothing is read beyond what git reads to tell them: an
// ignored folder is not walked. Two `git ls-files` calls.
func (r *Repo) Outside(ctx context.Context, exclude []string) ([]string, error) {
	specs := append([]string{"--"}, excludeSpecs(exclude)...)
	ignored, err := r.output(ctx, append([]string{"ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"}, specs...)...)
	if err != nil {
		return nil, fmt.Errorf("list the ignored files of %s: %w", r.top, err)
	}
	untracked, err := r.output(ctx, append([]string{"ls-files", "-z", "--others", "--exclude-standard"}, specs...)...)
	if err != nil {
		return nil, fmt.Errorf("list the untracked files of %s: %w", r.top, err)
	}
	var out []string
	for _, p := range bytes.Split(ignored, []byte{0}) {
		if len(p) > 0 && !excluded(string(p), exclude) {
			out = append(out, string(p))
		}
	}
	for _, p := range bytes.Split(untracked, []byte{0}) {
		// Untracked files are taken by a snapshot; a folder listed as one
		// entry is a repository of its own (which is not), or a folder
		// holding only ignored files (listed above).
		if s := string(p); strings.HasSuffix(s, "/") && !excluded(s, exclude) && isRepo(filepath.Join(r.top, filepath.FromSlash(s))) {
			out = append(out, s)
		}
	}
	return topmost(out), nil
}

// topmost sorts paths and drops those under a folder of the list (git
// lists an untracked folder holding only ignored files both as the
// folder and file by file).
func topmost(paths []string) []string {
	slices.Sort(paths)
	out := paths[:0]
	for _, p := range paths {
		if n := len(out); n > 0 && strings.HasSuffix(out[n-1], "/") && strings.HasPrefix(p, out[n-1]) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// isRepo reports whether dir holds a .git of its own (a folder, or the
// file of a linked worktree or a submodule).
func isRepo(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, ".git"))
	return err == nil
}

package git

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// A submodule checked out in the working tree has a configuration of its
// own, in its .git (the agent's to write, even when it is confined, where
// it made the submodule's folder a repository itself) or in
// .git/modules/<name>: filters there are none of the names the runner
// neutralises (drivers.go). `git add` compares each gitlink of the index
// whose commit did not move with the submodule's files, and does it by
// running `git status` in the submodule, with that configuration: no
// option of add's or configuration key turns that off (add sets
// override_submodule_config, which ignores diff.ignoreSubmodules and
// submodule.<name>.ignore). So a snapshot leaves the gitlinks of its index
// out of `git add -A` (:(exclude) pathspecs) and takes them with `git
// update-index`, which reads a submodule's HEAD in its own process and
// runs nothing: a submodule checked out at another commit gets that
// commit, one whose folder is gone is removed, one never checked out (an
// empty folder) stays as it was, as with add.

// gitlinkMode is a gitlink's mode (0160000) as an index stores it: 32 bits,
// big-endian.
var gitlinkMode = []byte{0, 0, 0xe0, 0}

// mayHaveGitlinks reports whether the index file at path, or a shared
// index of a split index beside it, may hold a gitlink: whether the bytes
// of a gitlink's mode appear anywhere in them. An index without any
// gitlink almost never has them elsewhere (an object name or a time
// holding them is a chance of about one in 2^32 for each of its bytes), so
// this spares the listing of the index in nearly every repository without
// submodules. A file that cannot be read may have any.
func mayHaveGitlinks(path string) bool {
	found, err := fileContains(path, gitlinkMode)
	if os.IsNotExist(err) {
		return false // an empty index
	}
	if err != nil || found {
		return true
	}
	shared, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "sharedindex.*"))
	for _, s := range shared {
		if found, err := fileContains(s, gitlinkMode); err != nil || found {
			return true
		}
	}
	return false
}

// fileContains reports whether the file at path holds the bytes of b,
// reading it in pieces.
func fileContains(path string, b []byte) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	keep := 0 // bytes of the previous piece kept, for a match across two
	for {
		n, err := io.ReadFull(f, buf[keep:])
		if bytes.Contains(buf[:keep+n], b) {
			return true, nil
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		keep = copy(buf, buf[keep+n-(len(b)-1):keep+n])
	}
}

// indexGitlinks lists the paths of the gitlinks in the temporary index.
func (r *Repo) indexGitlinks(ctx context.Context, idx *tempIndex) ([]string, error) {
	if !mayHaveGitlinks(idx.path) {
		return nil, nil
	}
	res, err := r.git(ctx, call{env: []string{"GIT_INDEX_FILE=" + idx.path}}, "ls-files", "-s", "-z")
	if err != nil {
		return nil, err
	}
	var links []string
	for _, e := range strings.Split(string(res.out), "\x00") {
		// <mode> SP <object> SP <stage> TAB <path>
		if meta, p, ok := strings.Cut(e, "\t"); ok && strings.HasPrefix(meta, "160000 ") {
			links = append(links, p)
		}
	}
	return links, nil
}

// updateGitlinks takes the gitlinks at links from the working tree into
// the temporary index (see above).
func (r *Repo) updateGitlinks(ctx context.Context, idx *tempIndex, links []string) error {
	if len(links) == 0 {
		return nil
	}
	var in bytes.Buffer
	for _, l := range links {
		in.WriteString(l)
		in.WriteByte(0)
	}
	c := call{env: []string{"GIT_INDEX_FILE=" + idx.path}, stdin: in.Bytes()}
	_, err := r.git(ctx, c, "-c", "core.splitIndex=false", "update-index", "--add", "--remove", "--replace", "-z", "--stdin")
	return err
}

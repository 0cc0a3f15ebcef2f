package git

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"strings"
)

// Change is a path where the working tree differs from the commit checked
// out: in the index (staged), in the files (unstaged), or both.
type Change struct {
	// Path is relative to the top of the working tree, with slashes. An
	// untracked folder that is a git repository of its own ends with "/"
	// (git lists it, not its files).
	Path string
	// Orig is where a rename or a copy came from ("" otherwise).
	Orig string
	// X is the index against HEAD, Y the files against the index, as git
	// status shows them: '.' (unchanged), 'M', 'T' (type), 'A', 'D', 'R',
	// 'C', 'U' (unmerged); both are '?' for an untracked file.
	X, Y byte
}

// Untracked reports whether the path is not in the index (and not
// ignored).
func (c Change) Untracked() bool { return c.X == '?' }

// String is the change as `git status --short` shows it: "M  a.go",
// " D b.go", "R  old.go -> new.go", "?? notes.txt". Paths are not
// escaped.
func (c Change) String() string {
	x, y := c.X, c.Y
	if x == '.' {
		x = ' '
	}
	if y == '.' {
		y = ' '
	}
	if c.Orig != "" {
		return fmt.Sprintf("%c%c %s -> %s", x, y, c.Orig, c.Path)
	}
	return fmt.Sprintf("%c%c %s", x, y, c.Path)
}

// Changes lists what differs between the working tree and the commit
// checked out: tracked files changed (staged or not, renames and copies
// with where they came from), untracked files one by one (not ignored
// ones), minus the paths under exclude. A submodule is changed when its
// commit is, not for the changes in its files: git would run a `git
// status` in it for those, with the submodule's own configuration, which
// is in the working tree (the agent's) and none of the runner's
// overrides cover. It runs one
// `git status --porcelain=v2 -z --untracked-files=all --ignore-submodules=dirty`.
//
// Each exclude entry is a path relative to the top of the working tree,
// with slashes (".runner/state", ".runner/lock"): that file, or that
// folder and everything in it (a trailing "/" changes nothing). Git is
// given them as `:(exclude,top,literal)` pathspecs, so it does not even
// walk an excluded folder, and the list is filtered again on its way out.
func (r *Repo) Changes(ctx context.Context, exclude []string) ([]Change, error) {
	args := []string{"status", "--porcelain=v2", "-z", "--untracked-files=all", "--ignored=no", "--ignore-submodules=dirty", "--"}
	args = append(args, excludeSpecs(exclude)...)
	out, err := r.output(ctx, args...)
	if err != nil {
		return nil, err
	}
	cs, err := parseStatus(out)
	if err != nil {
		return nil, fmt.Errorf("read git status of %s: %w", r.top, err)
	}
	return filterExcluded(cs, exclude), nil
}

// excludeSpecs are the pathspecs of the whole tree without the exclude
// paths.
func excludeSpecs(exclude []string) []string {
	specs := []string{":/"} // the whole tree, from its top
	for _, e := range exclude {
		if e = cleanExclude(e); e != "" {
			specs = append(specs, ":(exclude,top,literal)"+e)
		}
	}
	return specs
}

// cleanExclude is an exclude entry without its trailing slashes and "./";
// "" for one that names the whole tree, which would exclude everything.
func cleanExclude(e string) string {
	e = path.Clean("/" + e)[1:]
	return e
}

// excluded reports whether p is an exclude path or under one.
func excluded(p string, exclude []string) bool {
	p = strings.TrimSuffix(p, "/")
	for _, e := range exclude {
		if e = cleanExclude(e); e != "" && (p == e || strings.HasPrefix(p, e+"/")) {
			return true
		}
	}
	return false
}

func filterExcluded(cs []Change, exclude []string) []Change {
	if len(exclude) == 0 {
		return cs
	}
	out := cs[:0]
	for _, c := range cs {
		if !excluded(c.Path, exclude) {
			out = append(out, c)
		}
	}
	return out
}

// parseStatus reads `git status --porcelain=v2 -z`: header lines ("#
// ...", with --branch), then one entry per path:
//
//	1 XY sub mH mI mW hH hI path
//	2 XY sub mH mI mW hH hI Xscore path NUL origPath
//	u XY sub m1 m2 m3 mW h1 h2 h3 path
//	? path
//	! path
func parseStatus(out []byte) ([]Change, error) {
	var cs []Change
	fields := bytes.Split(out, []byte{0})
	for i := 0; i < len(fields); i++ {
		f := string(fields[i])
		if f == "" {
			continue
		}
		kind := f[0]
		var parts []string
		switch kind {
		case '#':
			continue
		case '?', '!':
			if len(f) < 3 || f[1] != ' ' {
				return nil, fmt.Errorf("bad entry %q", f)
			}
			if kind == '?' {
				cs = append(cs, Change{Path: f[2:], X: '?', Y: '?'})
			}
			continue
		case '1':
			parts = strings.SplitN(f, " ", 9)
		case '2':
			parts = strings.SplitN(f, " ", 10)
		case 'u':
			parts = strings.SplitN(f, " ", 11)
		default:
			return nil, fmt.Errorf("unknown entry %q", f)
		}
		want := map[byte]int{'1': 9, '2': 10, 'u': 11}[kind]
		if len(parts) != want || len(parts[1]) != 2 || parts[want-1] == "" {
			return nil, fmt.Errorf("bad entry %q", f)
		}
		c := Change{Path: parts[want-1], X: parts[1][0], Y: parts[1][1]}
		if kind == '2' {
			i++
			if i >= len(fields) || len(fields[i]) == 0 {
				return nil, fmt.Errorf("rename entry %q without its original path", f)
			}
			c.Orig = string(fields[i])
		}
		cs = append(cs, c)
	}
	return cs, nil
}

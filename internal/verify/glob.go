// Package verify keeps the judges of an iteration fixed while its agent
// works (SPEC §13): the runner's own inputs (.runner/config.toml,
// .runner/tree.json, the files of .runner/state/) and the paths matching
// verify.protect are read before the agent starts; what the agent changed
// of them is found after it exits, kept for a person to see, and put back.
package verify

import (
	"fmt"
	"path"
	"strings"
)

// A Glob is a verify.protect pattern: a slash-separated path relative to
// the repository root whose segments have path.Match syntax (*, ?, [...],
// \ escapes; none crosses a /), where a segment "**" matches any number of
// segments, none included. A pattern that matches a folder protects
// everything below it, as in .gitignore: "tests" and "tests/**" are the
// same.
type Glob struct {
	pattern string
	segs    []string
}

// ParseGlob checks a pattern and returns it ready to match: it must be
// relative, without "." or ".." segments or empty ones (a//b), and each
// segment must be valid for path.Match.
func ParseGlob(pattern string) (*Glob, error) {
	switch {
	case pattern == "":
		return nil, fmt.Errorf("empty pattern")
	case strings.HasPrefix(pattern, "/"):
		return nil, fmt.Errorf("%q: patterns are relative to the repository root; drop the leading /", pattern)
	}
	p := strings.TrimSuffix(pattern, "/")
	segs := strings.Split(p, "/")
	for _, s := range segs {
		switch s {
		case "":
			return nil, fmt.Errorf("%q: an empty path segment", pattern)
		case ".", "..":
			return nil, fmt.Errorf("%q: %q segments are not allowed", pattern, s)
		case "**":
			continue
		}
		if _, err := path.Match(s, ""); err != nil {
			return nil, fmt.Errorf("%q: segment %q: %v", pattern, s, err)
		}
	}
	return &Glob{pattern: pattern, segs: segs}, nil
}

// String is the pattern as written.
func (g *Glob) String() string { return g.pattern }

// Match reports whether the slash-separated relative path name is
// protected by g: g matches it or one of the folders above it.
func (g *Glob) Match(name string) bool {
	parts := strings.Split(name, "/")
	for i := len(parts); i > 0; i-- {
		if matchSegs(g.segs, parts[:i]) {
			return true
		}
	}
	return false
}

// matchExact reports whether g matches name itself, segment by segment;
// without "**" segments it agrees with path.Match(pattern, name).
func (g *Glob) matchExact(name string) bool {
	return matchSegs(g.segs, strings.Split(name, "/"))
}

// matchSegs matches pattern segments against path segments; "**" takes
// zero or more of them. Iterative with one backtrack point per "**", as
// for a '*' in a string: linear in practice, never exponential.
func matchSegs(pat, name []string) bool {
	pi, ni := 0, 0
	star, mark := -1, 0
	for ni < len(name) {
		if pi < len(pat) && pat[pi] == "**" {
			star, mark = pi, ni
			pi++
			continue
		}
		if pi < len(pat) {
			if ok, _ := path.Match(pat[pi], name[ni]); ok {
				pi++
				ni++
				continue
			}
		}
		if star < 0 {
			return false
		}
		// Let the last "**" take one more segment.
		mark++
		pi, ni = star+1, mark
	}
	for pi < len(pat) && pat[pi] == "**" {
		pi++
	}
	return pi == len(pat)
}

// Globs is a set of patterns; a path is protected when one matches.
type Globs []*Glob

// ParseGlobs parses every pattern; the error names the first bad one.
func ParseGlobs(patterns []string) (Globs, error) {
	out := make(Globs, 0, len(patterns))
	for _, p := range patterns {
		g, err := ParseGlob(p)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

// Match reports whether one of the patterns protects name.
func (gs Globs) Match(name string) bool {
	for _, g := range gs {
		if g.Match(name) {
			return true
		}
	}
	return false
}

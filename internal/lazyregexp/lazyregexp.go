// Package lazyregexp holds a regular expression that is compiled the
// first time it is used, not when the program starts, as Go's own
// cmd/go does with its internal package of the same name. A package-level
// regexp.MustCompile runs in the package's initializer, at every start of
// the binary, whatever the start is for: the runner's binary is started
// as the supervisor and as the confinement helper too, for every command
// it runs, and most of its patterns (the scrubber's checks, the
// executors' classifiers, the settings' names) serve one command or one
// path of it.
//
// It owns nothing but that deferral: the patterns stay in the packages
// that use them, and a pattern that does not compile still panics, on its
// first use instead of at start-up (each package's tests use them all).
package lazyregexp

import (
	"regexp"
	"sync"
)

// Regexp is a regexp.Regexp compiled on first use; it is safe for
// concurrent use, as regexp.Regexp is.
type Regexp struct {
	re func() *regexp.Regexp
}

// New returns the regular expression expr, to be compiled (with
// regexp.MustCompile) the first time one of its methods is called.
func New(expr string) *Regexp {
	return &Regexp{re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })}
}

// Regexp returns the compiled regular expression.
func (r *Regexp) Regexp() *regexp.Regexp { return r.re() }

// String returns the source text of the regular expression.
func (r *Regexp) String() string { return r.re().String() }

// MatchString is regexp.Regexp.MatchString.
func (r *Regexp) MatchString(s string) bool { return r.re().MatchString(s) }

// FindString is regexp.Regexp.FindString.
func (r *Regexp) FindString(s string) string { return r.re().FindString(s) }

// FindStringIndex is regexp.Regexp.FindStringIndex.
func (r *Regexp) FindStringIndex(s string) []int { return r.re().FindStringIndex(s) }

// FindStringSubmatch is regexp.Regexp.FindStringSubmatch.
func (r *Regexp) FindStringSubmatch(s string) []string { return r.re().FindStringSubmatch(s) }

// FindSubmatch is regexp.Regexp.FindSubmatch.
func (r *Regexp) FindSubmatch(b []byte) [][]byte { return r.re().FindSubmatch(b) }

// FindAllStringSubmatch is regexp.Regexp.FindAllStringSubmatch.
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.re().FindAllStringSubmatch(s, n)
}

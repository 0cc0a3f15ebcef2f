package config

import (
	"fmt"
	"sort"
	"strings"

	"github.com/runner-cli/runner/internal/suggest"
)

// Problem is one thing wrong with a config file.
type Problem struct {
	File   string
	Line   int    // 1-based; 0 when unknown
	Column int    // 1-based; 0 when unknown
	Key    string // dotted key such as "loop.max_attempts" or "guard[1].run"; "" for syntax errors and unknown keys, whose message names the key
	Msg    string
}

// Error formats the problem as "file: line N: key: message".
func (p Problem) Error() string {
	var b strings.Builder
	b.WriteString(p.File)
	b.WriteString(": ")
	if p.Line > 0 {
		if p.Column > 0 {
			fmt.Fprintf(&b, "line %d, column %d: ", p.Line, p.Column)
		} else {
			fmt.Fprintf(&b, "line %d: ", p.Line)
		}
	}
	if p.Key != "" {
		b.WriteString(p.Key)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Error is returned by Parse and Load when a config file is invalid. It
// holds every problem found, in file order.
type Error struct {
	Problems []Problem
}

// Error lists the problems, one per line.
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

// report collects the problems of one file, each on the line of its key.
type report struct {
	file     string
	data     []byte         // the file's text; nil for a Config built in code
	lines    map[string]int // key path -> line, found on first use
	problems []Problem
}

// line returns the line of path, or of its nearest ancestor the file
// mentions, or 0.
func (r *report) line(path string) int {
	if r.data == nil {
		return 0
	}
	if r.lines == nil {
		r.lines = keyLines(string(r.data))
	}
	for p := path; p != ""; p = parentPath(p) {
		if l, ok := r.lines[p]; ok {
			return l
		}
	}
	return 0
}

// addf reports a problem with the value of key path.
func (r *report) addf(path, format string, args ...any) {
	r.addAt(path, path, format, args...)
}

// addAt reports a problem with key path on the line of another key, for a
// key that is missing because of what another one says.
func (r *report) addAt(linePath, path, format string, args ...any) {
	r.problems = append(r.problems, Problem{File: r.file, Line: r.line(linePath), Key: path, Msg: fmt.Sprintf(format, args...)})
}

// err returns the problems in file order (those without a line last) as
// an *Error, or nil when there are none.
func (r *report) err() error {
	if len(r.problems) == 0 {
		return nil
	}
	sort.SliceStable(r.problems, func(i, j int) bool {
		li, lj := r.problems[i].Line, r.problems[j].Line
		if li == 0 || lj == 0 {
			return li != 0 && lj == 0
		}
		return li < lj
	})
	return &Error{Problems: r.problems}
}

// closestKey returns the candidate a misspelled key was probably meant to
// be: within a third of the key's length in edits, at least 2.
func closestKey(key string, candidates []string) string {
	return suggest.Closest(key, candidates, func(string) int { return max(2, len(key)/3) })
}

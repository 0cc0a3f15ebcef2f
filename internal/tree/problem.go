package tree

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxProblems bounds how many problems a ValidationError lists; any
// further ones are only counted (ValidationError.More).
const MaxProblems = 100

// Problem is one validation error in a tree file.
type Problem struct {
	File string // the tree file; "" when the tree did not come from a file
	Path string // node path such as "calc/ops"; "" for file-level problems
	Line int    // 1-based line in File; 0 when there is no position
	Col  int    // 1-based column (in runes); 0 when unknown
	Msg  string
}

// String renders the problem as "file: path: line L, column C: msg",
// leaving out the parts that are unknown.
func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		b.WriteString(": ")
	}
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	if p.Line > 0 {
		b.WriteString("line ")
		b.WriteString(strconv.Itoa(p.Line))
		if p.Col > 0 {
			b.WriteString(", column ")
			b.WriteString(strconv.Itoa(p.Col))
		}
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// ValidationError lists every problem found in a tree, in the order they
// were found: syntax and field problems in document order, then the
// problems between nodes (duplicate ids, dependencies, cycles).
type ValidationError struct {
	File     string
	Problems []Problem
	More     int // problems found beyond MaxProblems and not listed
}

// Error renders all problems, one per line.
func (e *ValidationError) Error() string {
	if len(e.Problems) == 0 {
		if e.File != "" {
			return e.File + ": invalid task tree"
		}
		return "invalid task tree"
	}
	lines := make([]string, 0, len(e.Problems)+1)
	for _, p := range e.Problems {
		lines = append(lines, p.String())
	}
	if e.More > 0 {
		lines = append(lines, fmt.Sprintf("... and %d more problems", e.More))
	}
	return strings.Join(lines, "\n")
}

// rawProblem is a problem before its node path and position are resolved;
// paths and line/column are only computed for the problems that are kept.
type rawProblem struct {
	node   int32 // index into the flat node list, or -1 for the file
	off    int   // byte offset in the source, or -1
	msg    string
	see    int32 // a node the message refers back to ("first used at"), or -1
	seeOff int
	phase  int
}

// collector gathers problems for one file.
type collector struct {
	file string
	data []byte // the source text; nil when validating structs
	fl   *flat  // resolves node paths
	list []rawProblem
	more int
	// phase orders problems: those of single fields (0) come before those
	// between nodes (1); within a phase they are sorted by position.
	phase int
}

func (c *collector) add(node int32, off int, msg string) {
	c.addSee(node, off, msg, -1, -1)
}

func (c *collector) addf(node int32, off int, format string, args ...any) {
	if len(c.list) >= MaxProblems {
		c.more++
		return
	}
	c.add(node, off, fmt.Sprintf(format, args...))
}

func (c *collector) addSee(node int32, off int, msg string, see int32, seeOff int) {
	if len(c.list) >= MaxProblems {
		c.more++
		return
	}
	if c.data == nil {
		off, seeOff = -1, -1
	}
	c.list = append(c.list, rawProblem{node: node, off: off, msg: msg, see: see, seeOff: seeOff, phase: c.phase})
}

func (c *collector) empty() bool { return len(c.list) == 0 }

// err returns the collected problems as a *ValidationError, or nil.
func (c *collector) err() error {
	if len(c.list) == 0 {
		return nil
	}
	slices.SortStableFunc(c.list, func(a, b rawProblem) int {
		if a.phase != b.phase {
			return a.phase - b.phase
		}
		return a.off - b.off
	})
	var offs []int
	for _, p := range c.list {
		if p.off >= 0 {
			offs = append(offs, p.off)
		}
		if p.seeOff >= 0 {
			offs = append(offs, p.seeOff)
		}
	}
	pos := positions(c.data, offs)
	e := &ValidationError{File: c.file, More: c.more, Problems: make([]Problem, 0, len(c.list))}
	for _, p := range c.list {
		q := Problem{File: c.file, Msg: p.msg}
		if p.node >= 0 && c.fl != nil {
			q.Path = c.fl.path(p.node)
		}
		if p.off >= 0 {
			lc := pos[p.off]
			q.Line, q.Col = lc[0], lc[1]
		}
		if p.see >= 0 && c.fl != nil {
			q.Msg += " (first used at " + c.fl.path(p.see)
			if p.seeOff >= 0 {
				lc := pos[p.seeOff]
				q.Msg += fmt.Sprintf(", line %d, column %d", lc[0], lc[1])
			}
			q.Msg += ")"
		}
		e.Problems = append(e.Problems, q)
	}
	return e
}

// positions converts byte offsets to line and column in one pass over
// data, however many offsets there are.
func positions(data []byte, offs []int) map[int][2]int {
	out := make(map[int][2]int, len(offs))
	if len(offs) == 0 {
		return out
	}
	offs = slices.Clone(offs)
	slices.Sort(offs)
	offs = slices.Compact(offs)
	pos, line, col := 0, 1, 1
	for _, orig := range offs {
		off := min(max(orig, pos), len(data))
		seg := data[pos:off]
		if nl := bytes.Count(seg, []byte{'\n'}); nl > 0 {
			line += nl
			last := bytes.LastIndexByte(seg, '\n')
			col = utf8.RuneCount(seg[last+1:]) + 1
		} else {
			col += utf8.RuneCount(seg)
		}
		pos = off
		out[orig] = [2]int{line, col}
	}
	return out
}

// quote renders a user-supplied string for a message, shortened so that a
// huge value cannot flood the output.
func quote(s string) string {
	const maxRunes = 64
	if utf8.RuneCountInString(s) > maxRunes {
		i, n := 0, 0
		for i = range s {
			if n == maxRunes {
				break
			}
			n++
		}
		s = s[:i] + "..."
	}
	return strconv.Quote(s)
}

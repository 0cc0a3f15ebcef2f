package tree

import (
	"bytes"
	"cmp"
	"container/heap"
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
	rank   int64 // order of discovery within the phase (see collector.rankOf)
}

// collector gathers problems for one file. When there are more than
// MaxProblems, it keeps the first MaxProblems in the order of discovery
// of a walk that reports, node by node in pre-order, each node's problems
// before those of the next one; the rest are only counted.
type collector struct {
	file string
	data []byte // the source text; nil when validating structs
	fl   *flat  // resolves node paths
	list []rawProblem
	more int
	// phase orders problems: those of single fields (0) come before those
	// between nodes (1); within a phase they are sorted by position.
	phase int
	// byNode ranks the problems of phase 0 by node before the order they
	// were found in: Parse reads a node's children before the members that
	// follow "children", and its missing fields last, yet reports them as
	// if each node were read whole before the next.
	byNode bool
	seq    int64
}

// rankOf is the rank a problem of node found now gets.
func (c *collector) rankOf(node int32) int64 {
	c.seq++
	if c.byNode && c.phase == 0 {
		return int64(node+1)<<40 | c.seq
	}
	return c.seq
}

// problemAfter orders problems by phase, then rank.
func problemAfter(a, b *rawProblem) bool {
	if a.phase != b.phase {
		return a.phase > b.phase
	}
	return a.rank > b.rank
}

// full reports whether no problem of this phase and rank can be kept any
// more, counting it as one more.
func (c *collector) full(rank int64) bool {
	if len(c.list) < MaxProblems {
		return false
	}
	if !problemAfter(&c.list[0], &rawProblem{phase: c.phase, rank: rank}) {
		c.more++
		return true
	}
	return false
}

func (c *collector) add(node int32, off int, msg string) {
	c.addSee(node, off, msg, -1, -1)
}

func (c *collector) addf(node int32, off int, format string, args ...any) {
	rank := c.rankOf(node)
	if c.full(rank) {
		return
	}
	c.keep(rawProblem{node: node, off: off, msg: fmt.Sprintf(format, args...), see: -1, seeOff: -1, rank: rank})
}

func (c *collector) addSee(node int32, off int, msg string, see int32, seeOff int) {
	rank := c.rankOf(node)
	if c.full(rank) {
		return
	}
	c.keep(rawProblem{node: node, off: off, msg: msg, see: see, seeOff: seeOff, rank: rank})
}

// keep adds p, dropping the last kept problem when MaxProblems are kept.
// Once full, list is a heap whose first element is the last problem.
func (c *collector) keep(p rawProblem) {
	if c.data == nil {
		p.off, p.seeOff = -1, -1
	}
	p.phase = c.phase
	if len(c.list) < MaxProblems {
		c.list = append(c.list, p)
		if len(c.list) == MaxProblems {
			heap.Init((*problemHeap)(&c.list))
		}
		return
	}
	c.more++
	c.list[0] = p
	heap.Fix((*problemHeap)(&c.list), 0)
}

// problemHeap keeps the last problem (by phase and rank) first.
type problemHeap []rawProblem

func (h problemHeap) Len() int           { return len(h) }
func (h problemHeap) Less(i, j int) bool { return problemAfter(&h[i], &h[j]) }
func (h problemHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *problemHeap) Push(x any)        { *h = append(*h, x.(rawProblem)) }
func (h *problemHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (c *collector) empty() bool { return len(c.list) == 0 }

// err returns the collected problems as a *ValidationError, or nil.
func (c *collector) err() error {
	if len(c.list) == 0 {
		return nil
	}
	// Discovery order first, so that problems at the same position stay
	// in the order they were found.
	slices.SortFunc(c.list, func(a, b rawProblem) int {
		if a.phase != b.phase {
			return a.phase - b.phase
		}
		return cmp.Compare(a.rank, b.rank)
	})
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

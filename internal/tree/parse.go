package tree

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/strictjson"
)

// Load reads and parses a tree file. The file must be at most MaxFileSize
// bytes of UTF-8. Read errors name the file; an invalid tree is reported
// as a *ValidationError listing every problem.
func Load(path string) (*Tree, error) {
	data, err := fsutil.ReadLimited(path, MaxFileSize, true)
	if err != nil {
		return nil, err
	}
	return Parse(fsutil.DisplayPath(path), data)
}

// Parse reads a tree from data, strictly: unknown fields, wrong types,
// missing required fields and every semantic rule of Validate are errors.
// All problems are reported at once as a *ValidationError, each naming
// file (used only in messages), node path and line and column. Empty
// lists ("acceptance": []) read as absent.
//
// The file is converted into nodes as it is read, in one pass, without an
// intermediate tree of JSON values. A syntax error anywhere is the only
// problem reported.
func Parse(file string, data []byte) (*Tree, error) {
	c := &collector{file: file, data: data, byNode: true}
	p := &treeParser{c: c, s: strictjson.NewScanner(data, MaxJSONDepth), fl: &flat{pos: true}}
	t, err := p.document()
	if err != nil {
		var se *strictjson.SyntaxError
		if errors.As(err, &se) {
			return nil, &ValidationError{File: file, Problems: []Problem{{File: file, Line: se.Line, Col: se.Col, Msg: se.Msg}}}
		}
		return nil, fmt.Errorf("parse %s: %w", file, err)
	}
	if t == nil || !c.empty() {
		return nil, c.err()
	}
	return t, nil
}

// treeParser converts a tree file into nodes while the scanner reads it.
type treeParser struct {
	c  *collector
	s  *strictjson.Scanner
	fl *flat
	// Scratch lists by nesting level, copied out at their exact length.
	strs [][]string
	kids [][]*Node
}

// document reads the whole file. It returns a syntax error, or the tree
// with problems left in the collector (nil when there is no root to
// check further).
func (p *treeParser) document() (*Tree, error) {
	c, s := p.c, p.s
	kind, topOff, err := s.Peek()
	if err != nil {
		return nil, err
	}
	if kind != strictjson.Object {
		if err := s.Skip(); err != nil {
			return nil, err
		}
		if err := s.End(); err != nil {
			return nil, err
		}
		c.addf(-1, topOff, `the file must hold a JSON object with "version" and "root", found %s`, kind)
		return nil, nil
	}
	t := &Tree{}
	var sawVersion, sawRoot, rootOK bool
	err = s.Object(func(key []byte, keyOff int) error {
		switch string(key) {
		case "version":
			sawVersion = true
			n, msg, off, err := p.int()
			if err != nil {
				return err
			}
			if msg != "" {
				c.add(-1, off, `field "version" `+msg)
				return nil
			}
			t.Version = n
			if n != Version {
				c.addf(-1, off, "unsupported version %d (this runner reads version %d)", n, Version)
			}
		case "root":
			sawRoot = true
			kind, off, err := s.Peek()
			if err != nil {
				return err
			}
			if kind != strictjson.Object {
				c.addf(-1, off, `field "root" must be an object, found %s`, kind)
				return nil
			}
			rootOK = true
			t.Root = &Node{}
			return p.node(t.Root, -1, -1, off, 0)
		default:
			k := string(key)
			msg := unknownField(k, topKeys, topAliases)
			if _, isNodeKey := lookupKey(k, nodeKeys[:]); isNodeKey {
				msg += `; node fields belong inside "root"`
			}
			c.add(-1, keyOff, msg)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := s.End(); err != nil {
		return nil, err
	}
	if !sawVersion {
		c.add(-1, topOff, `missing required field "version"`)
	}
	if !rootOK {
		if !sawRoot {
			c.add(-1, topOff, `missing required field "root"`)
		}
		return nil, nil
	}
	p.fl.finish()
	c.fl = p.fl
	c.checkRelations(p.fl)
	return t, nil
}

// node reads the object at off into n, checking each field, and the
// nodes below it. parent is the index of the node holding it (-1 for the
// root), k its place among the parent's children, level its nesting in
// scratch lists.
func (p *treeParser) node(n *Node, parent, k int32, off int, level int) error {
	c, s, fl := p.c, p.s, p.fl
	i := fl.add(n, parent, "")
	fl.objOffs = append(fl.objOffs, int32(off))
	fl.idOffs = append(fl.idOffs, int32(off))
	fl.depOffStart = append(fl.depOffStart, int32(len(fl.depOffs)))
	var present, bad fieldSet
	var valOff [numNodeKeys]int32 // by field bit: where the field's value starts
	typeErr := func(f fieldSet, off int, kind strictjson.Kind, want string) {
		bad |= f
		c.addf(i, off, "field %q must be %s, found %s", f.key(), want, kind)
	}
	err := s.Object(func(key []byte, keyOff int) error {
		f, known := lookupKeyBytes(key)
		if !known {
			c.add(i, keyOff, unknownField(string(key), nodeKeys[:], nodeAliases))
			return nil
		}
		present |= f
		kind, voff, err := s.Peek()
		if err != nil {
			return err
		}
		valOff[f.bit()] = int32(voff)
		switch f {
		case fID, fTitle, fGoal, fStatus, fBlockedReason:
			if kind != strictjson.String {
				typeErr(f, voff, kind, "a string")
				return nil
			}
			str, err := s.String()
			if err != nil {
				return err
			}
			switch f {
			case fID:
				n.ID = str
				fl.idOffs[i] = int32(voff)
			case fTitle:
				n.Title = str
			case fGoal:
				n.Goal = str
			case fStatus:
				n.Status = internStatus(str)
			case fBlockedReason:
				n.BlockedReason = str
			}
		case fAcceptance, fDependsOn:
			if kind != strictjson.Array {
				typeErr(f, voff, kind, "a list of strings")
				return nil
			}
			for len(p.strs) <= level {
				p.strs = append(p.strs, nil)
			}
			list := p.strs[level][:0]
			if f == fDependsOn {
				fl.depOffStart[i] = int32(len(fl.depOffs))
			}
			err := s.Array(func(k int) error {
				ek, eoff, err := s.Peek()
				if err != nil {
					return err
				}
				if ek != strictjson.String {
					bad |= f
					c.addf(i, eoff, "field %q item %d must be a string, found %s", f.key(), k+1, ek)
					return nil
				}
				str, err := s.String()
				if err != nil {
					return err
				}
				list = append(list, str)
				if f == fDependsOn {
					fl.depOffs = append(fl.depOffs, int32(eoff))
				}
				return nil
			})
			if err != nil {
				return err
			}
			var out []string
			if len(list) > 0 {
				out = slices.Clone(list)
			}
			clear(list)
			p.strs[level] = list[:0]
			if f == fAcceptance {
				n.Acceptance = out
			} else {
				n.DependsOn = out
			}
		case fMaxAttempts, fAttempts:
			num, msg, _, err := p.int()
			if err != nil {
				return err
			}
			if msg != "" {
				bad |= f
				c.addf(i, voff, "field %q %s", f.key(), msg)
				return nil
			}
			if f == fAttempts {
				n.Attempts = num
			} else {
				n.MaxAttempts = &num
			}
		case fChildren:
			if kind != strictjson.Array {
				typeErr(f, voff, kind, "a list of nodes")
				return nil
			}
			for len(p.kids) <= level {
				p.kids = append(p.kids, nil)
			}
			kids := p.kids[level][:0]
			err := s.Array(func(k int) error {
				ek, eoff, err := s.Peek()
				if err != nil {
					return err
				}
				if ek != strictjson.Object {
					c.addf(i, eoff, `field "children" item %d must be an object, found %s`, k+1, ek)
					return nil
				}
				ch := &Node{}
				kids = append(kids, ch)
				return p.node(ch, i, int32(k), eoff, level+1)
			})
			if err != nil {
				return err
			}
			if len(kids) > 0 {
				n.Children = slices.Clone(kids)
			}
			clear(kids)
			p.kids[level] = kids[:0]
		}
		return nil
	})
	if err != nil {
		return err
	}
	fl.seg[i] = segment(n.ID, parent, k)
	checkFields(n, present, bad, func(f fieldSet, msg string) {
		at := off
		if present&f != 0 {
			at = int(valOff[f.bit()])
		}
		c.add(i, at, msg)
	})
	return nil
}

// int reads a whole number; msg says what is wrong otherwise (the value
// is read either way), off is where the value starts.
func (p *treeParser) int() (n int, msg string, off int, err error) {
	kind, off, err := p.s.Peek()
	if err != nil {
		return 0, "", off, err
	}
	if kind != strictjson.Number {
		return 0, "must be a whole number, found " + kind.String(), off, nil
	}
	lit, err := p.s.Number()
	if err != nil {
		return 0, "", off, err
	}
	if strings.ContainsAny(lit, ".eE") {
		return 0, "must be a whole number, found " + lit, off, nil
	}
	n, err = strconv.Atoi(lit)
	if err != nil {
		return 0, "is out of range: " + quote(lit), off, nil
	}
	return n, "", off, nil
}

// internStatus returns the valid statuses without allocating a string
// per node.
func internStatus(s string) Status {
	switch Status(s) {
	case StatusOpen:
		return StatusOpen
	case StatusDone:
		return StatusDone
	case StatusBlocked:
		return StatusBlocked
	}
	return Status(s)
}

var topKeys = []string{"version", "root"}

// Aliases are keys people plausibly write for a field, keyed by their
// normalized form (see normKey).
var (
	topAliases  = map[string]string{"tree": "root", "node": "root", "task": "root", "ver": "version"}
	nodeAliases = map[string]string{
		"deps": "depends_on", "dependencies": "depends_on", "depends": "depends_on", "dependson": "depends_on",
		"after": "depends_on", "needs": "depends_on", "requires": "depends_on", "dependon": "depends_on",
		"name": "title", "description": "goal", "desc": "goal", "details": "goal",
		"acceptancecriteria": "acceptance", "criteria": "acceptance", "accept": "acceptance",
		"tasks": "children", "subtasks": "children", "nodes": "children", "items": "children", "child": "children",
		"retries": "max_attempts", "maxretries": "max_attempts", "maxtries": "max_attempts", "attemptlimit": "max_attempts",
		"state": "status", "reason": "blocked_reason", "tries": "attempts",
	}
)

// lookupKeyBytes finds key among the node keys without allocating.
func lookupKeyBytes(key []byte) (fieldSet, bool) {
	for i, k := range nodeKeys {
		if string(key) == k {
			return 1 << i, true
		}
	}
	return 0, false
}

// lookupKey finds key among keys, returning its fieldSet bit.
func lookupKey(key string, keys []string) (fieldSet, bool) {
	for i, k := range keys {
		if k == key {
			return 1 << i, true
		}
	}
	return 0, false
}

// unknownField words the error for an unknown key, with a suggestion when
// the key looks like a known one written differently or misspelled.
func unknownField(key string, keys []string, aliases map[string]string) string {
	msg := "unknown field " + quote(key)
	if s := suggest(key, keys, aliases); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return msg
}

func suggest(key string, keys []string, aliases map[string]string) string {
	if len(key) > 64 {
		return ""
	}
	nk := normKey(key)
	for _, k := range keys {
		if normKey(k) == nk {
			return k
		}
	}
	if a, ok := aliases[nk]; ok {
		return a
	}
	best, bestDist := "", 3
	for _, k := range keys {
		limit := 2
		if len(k) <= 4 {
			limit = 1
		}
		if d := editDistance(strings.ToLower(key), k); d <= limit && d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// normKey lowercases key and drops '_', '-' and spaces, so that
// dependsOn, depends-on and DEPENDS_ON all read as "dependson".
func normKey(key string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(key) {
		if r != '_' && r != '-' && r != ' ' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// editDistance is the Levenshtein distance between two short strings.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

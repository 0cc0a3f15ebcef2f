package plan

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/runner-cli/runner/internal/scaffold"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/textfmt"
	"github.com/runner-cli/runner/internal/tree"
)

// InvalidError is a plan that cannot become the tree: every problem
// found, one per line, each naming the node by its path.
type InvalidError struct {
	Problems []string
}

func (e *InvalidError) Error() string {
	noun := "problems"
	if len(e.Problems) == 1 {
		noun = "problem"
	}
	return fmt.Sprintf("the plan is invalid (%d %s); tree.json is unchanged:\n%s", len(e.Problems), noun, strings.Join(e.Problems, "\n"))
}

// invalid turns a validation error into an InvalidError whose problems
// name label (where the plan can be read) as their file.
func invalid(err error, label string) error {
	var ve *tree.ValidationError
	if !errors.As(err, &ve) {
		return &InvalidError{Problems: []string{label + ": " + err.Error()}}
	}
	e := &InvalidError{}
	for _, p := range ve.Problems {
		p.File = label
		e.Problems = append(e.Problems, p.String())
	}
	if ve.More > 0 {
		e.Problems = append(e.Problems, fmt.Sprintf("%s: ... and %d more problems", label, ve.More))
	}
	return e
}

// WholeTree returns the tree a plan of the whole tree makes (SPEC §16):
// the answer's children are the root's children, and the root stays:
// root is the current tree's root (its id, title, goal and acceptance),
// or the root named after the plan's first document when there is no
// tree. An answer that holds the root itself, one task whose id is the
// root's or that has children of its own, is taken as the root (the shape
// earlier contracts asked for). The tree is validated as tree.json is
// (SPEC §2); the error is an *InvalidError whose problems name label as
// their file.
func WholeTree(root *tree.Node, children []*tree.Node, label string) (*tree.Tree, error) {
	if len(children) == 0 {
		return nil, &InvalidError{Problems: []string{label + ": the plan has no tasks: a decomposed answer lists the root's tasks in children"}}
	}
	var top *tree.Node
	if len(children) == 1 && (children[0].ID == root.ID || !children[0].IsLeaf()) {
		top = children[0]
	} else {
		top = &tree.Node{ID: root.ID, Title: root.Title, Goal: root.Goal, Acceptance: root.Acceptance, Children: children}
	}
	t := &tree.Tree{Version: tree.Version, Root: top}
	if err := t.Validate(label); err != nil {
		return nil, invalid(err, label)
	}
	return t, nil
}

// PlanRoot is the root a whole plan keeps: the current tree's, without
// its tasks and progress; with no tree, or when its root is still the
// example `runner init` wrote (scaffold.IsExampleRoot), the root named
// after the documents (DocumentRoot).
func PlanRoot(cur *tree.Tree, docs []Document) *tree.Node {
	if cur != nil && cur.Root != nil && !scaffold.IsExampleRoot(cur.Root) {
		r := cur.Root
		return &tree.Node{ID: r.ID, Title: r.Title, Goal: r.Goal, Acceptance: r.Acceptance}
	}
	return DocumentRoot(docs)
}

// shownTree is the tree a planning prompt shows as its Current Tree: the
// current one, except for a whole plan replacing the example `runner
// init` wrote, whose tasks are nobody's (scaffold.IsExample).
func shownTree(cur *current, node *tree.Node) *tree.Tree {
	if node == nil && scaffold.IsExample(cur.t) {
		return nil
	}
	return cur.t
}

// DocumentRoot is a root named after the first document: its id from the
// file name, its title from its first Markdown heading (else the file
// name), its goal from its first paragraph of prose.
func DocumentRoot(docs []Document) *tree.Node {
	root := &tree.Node{ID: "plan", Title: "Plan"}
	if len(docs) == 0 {
		return root
	}
	d := docs[0]
	base := strings.TrimSuffix(path.Base(filepath.ToSlash(d.Name)), path.Ext(d.Name))
	if id := idFrom(base); id != "" {
		root.ID, root.Title = id, base
	}
	lines := strings.SplitN(d.Text, "\n", 400)
	for _, line := range lines {
		if title, ok := strings.CutPrefix(strings.TrimSpace(line), "# "); ok && strings.TrimSpace(title) != "" {
			root.Title = textfmt.OneLine(strings.TrimSpace(title), 200)
			break
		}
	}
	root.Goal = firstParagraph(lines)
	return root
}

// firstParagraph is the first paragraph of prose in a Markdown text's
// lines, on one line: headings, code blocks, tables, rules and front
// matter are passed over; "" when there is none.
func firstParagraph(lines []string) string {
	var para []string
	fence := false
	for i, line := range lines {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			fence = !fence
			continue
		case fence:
			continue
		case i == 0 && t == "---":
			// Front matter: up to its closing line.
			for j := 1; j < len(lines); j++ {
				if strings.TrimSpace(lines[j]) == "---" {
					return firstParagraph(append(make([]string, j+1), lines[j+1:]...))
				}
			}
		}
		skip := t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "|") || strings.HasPrefix(t, "<!--") ||
			strings.Trim(t, "-=*_ ") == ""
		if skip {
			if len(para) > 0 {
				break
			}
			continue
		}
		para = append(para, t)
	}
	return textfmt.OneLine(strings.Join(para, " "), 500)
}

// idFrom makes a task id of s: its letters and digits, lowercased, other
// runs of characters made one '-', at most 64 characters; "" when nothing
// is left.
func idFrom(s string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(s) {
		switch {
		case c < utf8.RuneSelf && (unicode.IsLetter(c) || unicode.IsDigit(c)):
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(c)
			dash = false
		default:
			dash = true
		}
		if b.Len() >= 64 {
			break
		}
	}
	id := b.String()
	if len(id) > 64 {
		id = id[:64]
	}
	if !tree.ValidID(id) {
		return ""
	}
	return id
}

// Decomposition returns a copy of current with children added under the
// task id, validated with the whole tree as a decomposition is
// (tree.AddChildren); current is not changed. The error is an
// *InvalidError whose problems name label as their file.
func Decomposition(current *tree.Tree, id string, children []*tree.Node, label string) (*tree.Tree, error) {
	t := current.Clone()
	if err := t.AddChildren(nil, id, children); err != nil {
		return nil, invalid(err, label)
	}
	return t, nil
}

// Progress lists, by path, the tasks of t that a run has touched: done,
// blocked, or with attempts spent. Replacing t loses them.
func Progress(t *tree.Tree) []string {
	if t == nil || t.Root == nil {
		return nil
	}
	ix := tree.NewIndex(t)
	var out []string
	t.Walk(func(n *tree.Node) {
		if n.Status == tree.StatusDone || n.Status == tree.StatusBlocked || n.Attempts > 0 {
			out = append(out, ix.Path(n.ID))
		}
	})
	return out
}

// LedgerProgress adds to Progress(t) the tasks the ledger says a run
// touched, whatever tree.json shows (a `git stash` or a hand edit can drop
// its statuses): those whose owned fields (run_state.json) are done,
// blocked or with attempts spent, and those with an outcome in the journal.
// A task that is no longer in t is named by its id.
func LedgerProgress(t *tree.Tree, owned map[string]state.Owned, journal []state.Record) []string {
	out := Progress(t)
	var ix *tree.Index
	if t != nil && t.Root != nil {
		ix = tree.NewIndex(t)
	}
	add := func(id string) {
		name := id
		if ix != nil && ix.Node(id) != nil {
			name = ix.Path(id)
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	ids := make([]string, 0, len(owned))
	for id := range owned {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		o := owned[id]
		if o.Status == string(tree.StatusDone) || o.Status == string(tree.StatusBlocked) || o.Attempts > 0 {
			add(id)
		}
	}
	for _, rec := range journal {
		if rec.Node != "" && (rec.Event == state.EventRecorded || rec.Event == state.EventSkipped) {
			add(rec.Node)
		}
	}
	return out
}

// Open checks that task id of t can be decomposed: it exists, has no
// children, and is open.
func Open(t *tree.Tree, ix *tree.Index, id string) (*tree.Node, error) {
	n := ix.Node(id)
	switch {
	case n == nil:
		return nil, fmt.Errorf("no task with id %q in tree.json (`runner status` lists them)", id)
	case !n.IsLeaf():
		return nil, fmt.Errorf("task %s already has subtasks; plan one of them with --node, or remove them from tree.json first", ix.Path(id))
	case n.Status == tree.StatusDone:
		return nil, fmt.Errorf("task %s is done; there is nothing left to decompose", ix.Path(id))
	case n.Status == tree.StatusBlocked:
		return nil, fmt.Errorf("task %s is blocked (%s); reopen it first with `runner reset %s`", ix.Path(id), n.BlockedReason, id)
	}
	return n, nil
}

// count is the number of nodes in the trees under nodes.
func count(nodes []*tree.Node) int {
	n := 0
	for _, c := range nodes {
		n += 1 + count(c.Children)
	}
	return n
}

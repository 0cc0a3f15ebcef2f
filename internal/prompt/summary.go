package prompt

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/runner-cli/runner/internal/textfmt"
	"github.com/runner-cli/runner/internal/tree"
)

// Bounds of the Tree Summary section, whatever the prompt budget.
const (
	TreeSummaryMaxBytes = 8 << 10
	TreeSummaryMaxLines = 200
)

// Caps on the free text in one outline line.
const (
	maxTitleRunes  = 80
	maxReasonRunes = 60
)

const summaryLegend = "Marks: [x] done, [ ] open, [!] blocked, [>] selected; (attempts used/limit). \"… N more\" stands for N hidden nodes at that level and everything under them.\n"

// scanResult is what one walk over the tree learns.
type scanResult struct {
	total int                   // nodes in the tree
	path  []*tree.Node          // root … selected node; nil when not found
	deps  map[string]*tree.Node // nodes named in want
}

// scanTree walks the whole tree once, counting nodes, recording the path to
// selectedID and the nodes whose ids are in want.
func scanTree(t *tree.Tree, selectedID string, want []string) scanResult {
	var r scanResult
	if t == nil || t.Root == nil {
		return r
	}
	wanted := map[string]bool{}
	for _, id := range want {
		wanted[id] = true
	}
	if len(wanted) > 0 {
		r.deps = map[string]*tree.Node{}
	}
	var stack []*tree.Node
	var walk func(n *tree.Node)
	walk = func(n *tree.Node) {
		r.total++
		stack = append(stack, n)
		if r.path == nil && selectedID != "" && n.ID == selectedID {
			r.path = slices.Clone(stack)
		}
		if wanted[n.ID] {
			r.deps[n.ID] = n
		}
		for _, c := range n.Children {
			walk(c)
		}
		stack = stack[:len(stack)-1]
	}
	walk(t.Root)
	return r
}

// TreeSummary renders a bounded outline of t, at most maxBytes bytes
// (TreeSummaryMaxBytes when maxBytes ≤ 0) and TreeSummaryMaxLines lines.
// It shows the path from the root to the selected node, then the selected
// node's siblings (nearest first) and children, then the siblings of its
// ancestors (nearest first), then the other nodes level by level while room
// is left; the outline itself is always in pre-order. Runs of hidden nodes
// become "… N more" lines, and the last line says how many nodes were left
// out. selectedID may be empty for a plain outline.
//
// ix, when not nil, must index t (tree.NewIndex(t)); it gives the node
// count and the path, so the cost is proportional to what is shown. Without
// it one walk over the tree counts the nodes. The outline of the whole tree
// is never built.
func TreeSummary(t *tree.Tree, ix *tree.Index, selectedID string, defaultMaxAttempts int, maxBytes int) (text string, shown, omitted int) {
	return treeSummary(t, selectedID, defaultMaxAttempts, maxBytes, scan(t, ix, selectedID, nil))
}

// scan learns the node count and the path to selectedID from ix when there
// is one (without touching the rest of the tree), else by walking t once.
func scan(t *tree.Tree, ix *tree.Index, selectedID string, want []string) scanResult {
	if ix == nil {
		return scanTree(t, selectedID, want)
	}
	r := scanResult{total: ix.Len()}
	for n := ix.Node(selectedID); n != nil; n = ix.Parent(n.ID) {
		r.path = append(r.path, n)
	}
	slices.Reverse(r.path)
	if t == nil || len(r.path) > 0 && r.path[0] != t.Root {
		return scanTree(t, selectedID, want) // ix does not index t
	}
	return r
}

func treeSummary(t *tree.Tree, selectedID string, defaultMaxAttempts, maxBytes int, sc scanResult) (string, int, int) {
	if t == nil || t.Root == nil {
		return "", 0, 0
	}
	if maxBytes <= 0 {
		maxBytes = TreeSummaryMaxBytes
	}
	o := &outline{
		selectedID: selectedID,
		defMax:     defaultMaxAttempts,
		maxBytes:   maxBytes,
		maxLines:   TreeSummaryMaxLines,
		total:      sc.total,
	}
	path := sc.path
	if path == nil {
		path = []*tree.Node{t.Root}
	}
	// The path to the selected node comes first; when all of it does not
	// fit, keep its lower part.
	ok := false
	for skip := 0; skip < len(path) && !ok; skip++ {
		ok = o.startPath(path, skip)
	}
	if !ok {
		return o.emptyResult()
	}
	if sc.path != nil {
		last := len(path) - 1
		if last > 0 {
			o.addAround(path[last-1], childIndex(path[last-1], path[last]))
		}
		o.addChildren(path[last])
		for i := last - 1; i > o.skipped; i-- {
			o.addAround(path[i-1], childIndex(path[i-1], path[i]))
		}
	}
	o.fillLevels()
	return o.render(), len(o.info), o.total - len(o.info)
}

// outline is the set of nodes chosen for the summary and its running cost.
type outline struct {
	selectedID string
	defMax     int
	maxBytes   int
	maxLines   int
	total      int

	top     *tree.Node // highest node shown, drawn at depth 0
	skipped int        // levels of the path above top that are not shown
	info    map[*tree.Node]*shownNode
	bytes   int
	lines   int
}

type shownNode struct {
	depth   int
	kids    []int // indices of shown children, ascending
	elBytes int   // cost of the "… N more" lines among the children
	elLines int
}

// fixedCost is the legend, the footer (sized for the largest numbers) and
// the line for skipped levels.
func (o *outline) fixedCost() (bytes, lines int) {
	bytes = len(summaryLegend) + len(o.footer(o.total, o.total))
	lines = 2
	if o.skipped > 0 {
		bytes += len(o.skippedLine())
		lines++
	}
	return bytes, lines
}

func (o *outline) footer(shown, omitted int) string {
	return fmt.Sprintf("Shown %d of %d nodes; %d left out.\n", shown, o.total, omitted)
}

func (o *outline) skippedLine() string {
	return fmt.Sprintf("… %d higher levels not shown\n", o.skipped)
}

func (o *outline) emptyResult() (string, int, int) {
	o.info = nil
	if f := o.footer(0, o.total); len(f) <= o.maxBytes {
		return f, 0, o.total
	}
	return "", 0, o.total
}

// startPath resets the outline to path[skip:], reporting whether it fits.
func (o *outline) startPath(path []*tree.Node, skip int) bool {
	o.top, o.skipped = path[skip], skip
	o.info = map[*tree.Node]*shownNode{}
	o.bytes, o.lines = o.fixedCost()
	if !o.addTop(path[skip]) {
		return false
	}
	for i := skip + 1; i < len(path); i++ {
		at := childIndex(path[i-1], path[i])
		if at < 0 || !o.add(path[i-1], at) {
			return false
		}
	}
	return true
}

func childIndex(parent, child *tree.Node) int {
	for i, c := range parent.Children {
		if c == child {
			return i
		}
	}
	return -1
}

func (o *outline) addTop(n *tree.Node) bool {
	s := &shownNode{depth: 0}
	s.elBytes, s.elLines = o.gapCost(n, s)
	b := o.bytes + len(o.line(n, 0)) + s.elBytes
	l := o.lines + 1 + s.elLines
	if b > o.maxBytes || l > o.maxLines {
		return false
	}
	o.info[n] = s
	o.bytes, o.lines = b, l
	return true
}

// add shows parent.Children[i] if the outline stays within its bounds.
// parent must be shown.
func (o *outline) add(parent *tree.Node, i int) bool {
	p := o.info[parent]
	n := parent.Children[i]
	if p == nil || o.info[n] != nil {
		return o.info[n] != nil
	}
	s := &shownNode{depth: p.depth + 1}
	s.elBytes, s.elLines = o.gapCost(n, s)

	pos, _ := slices.BinarySearch(p.kids, i)
	kids := slices.Insert(slices.Clone(p.kids), pos, i)
	pb, pl := o.gapCost(parent, &shownNode{depth: p.depth, kids: kids})

	b := o.bytes + len(o.line(n, s.depth)) + s.elBytes + pb - p.elBytes
	l := o.lines + 1 + s.elLines + pl - p.elLines
	if b > o.maxBytes || l > o.maxLines {
		return false
	}
	o.info[n] = s
	p.kids, p.elBytes, p.elLines = kids, pb, pl
	o.bytes, o.lines = b, l
	return true
}

// gapCost is the size of the "… N more" lines for the hidden runs among
// n's children when s.kids are shown.
func (o *outline) gapCost(n *tree.Node, s *shownNode) (bytes, lines int) {
	next := 0
	for _, k := range append(slices.Clip(s.kids), len(n.Children)) {
		if k > next {
			bytes += len(moreLine(s.depth+1, k-next))
			lines++
		}
		next = k + 1
	}
	return bytes, lines
}

// addAround shows parent's children nearest to index at first (at itself
// when not yet shown), until one does not fit. It reports whether all fit.
func (o *outline) addAround(parent *tree.Node, at int) bool {
	if o.info[parent] == nil {
		return false
	}
	if at >= 0 && !o.add(parent, at) {
		return false
	}
	for d := 1; at-d >= 0 || at+d < len(parent.Children); d++ {
		for _, i := range []int{at - d, at + d} {
			if i >= 0 && i < len(parent.Children) && !o.add(parent, i) {
				return false
			}
		}
	}
	return true
}

// addChildren shows n's children in order until one does not fit.
func (o *outline) addChildren(n *tree.Node) {
	for i := range n.Children {
		if !o.add(n, i) {
			return
		}
	}
}

// fillLevels shows the remaining nodes level by level, each level in
// pre-order, until one does not fit. Going by level keeps the outline an
// overview instead of spending the room on the first deep branch.
func (o *outline) fillLevels() {
	for depth := 0; ; depth++ {
		more, ok := o.fillLevel(o.top, depth)
		if !ok || !more {
			return
		}
	}
}

// fillLevel shows the hidden children of the shown nodes at depth below n.
// more reports whether any shown node at that depth has children (so the
// next level may have work); ok is false when a node did not fit.
func (o *outline) fillLevel(n *tree.Node, depth int) (more, ok bool) {
	s := o.info[n]
	if s.depth == depth {
		for i := range n.Children {
			if !o.add(n, i) {
				return true, false
			}
		}
		return len(n.Children) > 0, true
	}
	for _, k := range slices.Clone(s.kids) {
		m, ok := o.fillLevel(n.Children[k], depth)
		more = more || m
		if !ok {
			return more, false
		}
	}
	return more, true
}

func (o *outline) render() string {
	var b strings.Builder
	b.Grow(o.bytes)
	b.WriteString(summaryLegend)
	if o.skipped > 0 {
		b.WriteString(o.skippedLine())
	}
	o.renderNode(&b, o.top)
	b.WriteString(o.footer(len(o.info), o.total-len(o.info)))
	return b.String()
}

func (o *outline) renderNode(b *strings.Builder, n *tree.Node) {
	s := o.info[n]
	b.WriteString(o.line(n, s.depth))
	next := 0
	for _, k := range s.kids {
		if k > next {
			b.WriteString(moreLine(s.depth+1, k-next))
		}
		o.renderNode(b, n.Children[k])
		next = k + 1
	}
	if len(n.Children) > next {
		b.WriteString(moreLine(s.depth+1, len(n.Children)-next))
	}
}

// line renders one node: indentation, mark, id, title, and attempts or the
// blocked reason when there is something to say.
func (o *outline) line(n *tree.Node, depth int) string {
	var b strings.Builder
	b.WriteString(strings.Repeat("  ", depth))
	switch {
	case n.ID == o.selectedID:
		b.WriteString("[>] ")
	case n.EffectiveStatus() == tree.StatusDone:
		b.WriteString("[x] ")
	case n.EffectiveStatus() == tree.StatusBlocked:
		b.WriteString("[!] ")
	default:
		b.WriteString("[ ] ")
	}
	b.WriteString(n.ID)
	if title := textfmt.OneLine(n.Title, maxTitleRunes); title != "" && title != n.ID {
		b.WriteString(" — " + title)
	}
	var notes []string
	if n.Attempts > 0 {
		if limit := n.AttemptLimit(o.defMax); limit > 0 {
			notes = append(notes, fmt.Sprintf("attempts %d/%d", n.Attempts, limit))
		} else {
			notes = append(notes, fmt.Sprintf("attempts %d", n.Attempts))
		}
	}
	if n.EffectiveStatus() == tree.StatusBlocked && n.BlockedReason != "" {
		notes = append(notes, "blocked: "+textfmt.OneLine(n.BlockedReason, maxReasonRunes))
	}
	if len(notes) > 0 {
		b.WriteString(" (" + strings.Join(notes, "; ") + ")")
	}
	b.WriteString("\n")
	return b.String()
}

func moreLine(depth, n int) string {
	return strings.Repeat("  ", depth) + "… " + strconv.Itoa(n) + " more\n"
}

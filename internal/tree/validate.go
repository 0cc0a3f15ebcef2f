package tree

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"unicode"
)

// Limits of the tree file format.
const (
	// MaxFileSize is the largest tree.json Load reads.
	MaxFileSize = 64 << 20
	// MaxJSONDepth bounds the nesting of arrays and objects in tree.json.
	MaxJSONDepth = 256
	// MaxNodeDepth is how many levels below the root a node may sit. A
	// node at level k is a JSON object at depth 2+2k whose arrays sit at
	// 3+2k, so this is the deepest level whose canonical form still fits
	// MaxJSONDepth: every tree that validates can be written and read back.
	MaxNodeDepth = (MaxJSONDepth - 3) / 2
)

// ValidID reports whether id matches ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$.
func ValidID(id string) bool {
	if len(id) == 0 || len(id) > 64 || !isAlnum(id[0]) {
		return false
	}
	for i := 1; i < len(id); i++ {
		if c := id[i]; !isAlnum(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// Valid reports whether s is a status a tree file may hold.
func (s Status) Valid() bool {
	return s == StatusOpen || s == StatusDone || s == StatusBlocked
}

// fieldSet is a set of node fields.
type fieldSet uint16

const (
	fID fieldSet = 1 << iota
	fTitle
	fGoal
	fAcceptance
	fChecks
	fRemoves
	fDependsOn
	fMaxAttempts
	fMaxCostUSD
	fMaxTokens
	fExecutors
	fStatus
	fAttempts
	fBlockedReason
	fChildren
)

// numNodeKeys is len(nodeKeys).
const numNodeKeys = 15

// nodeKeys are the JSON keys of a node, in canonical order, indexed by the
// bit position of their fieldSet value.
var nodeKeys = [numNodeKeys]string{"id", "title", "goal", "acceptance", "checks", "removes", "depends_on", "max_attempts",
	"max_cost_usd", "max_tokens", "executors", "status", "attempts", "blocked_reason", "children"}

// bit is the bit position of a single field.
func (f fieldSet) bit() int { return bits.TrailingZeros16(uint16(f)) }

func (f fieldSet) key() string {
	for i, k := range nodeKeys {
		if f == 1<<i {
			return k
		}
	}
	return ""
}

const idRule = "an id is 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit"

// checkFields applies the rules that concern one node on its own. present
// holds the fields the node sets, bad those that already had a type error
// (and are not checked again).
func checkFields(n *Node, present, bad fieldSet, emit func(f fieldSet, msg string)) {
	if bad&fID == 0 {
		if present&fID == 0 {
			emit(fID, `missing required field "id"`)
		} else if !ValidID(n.ID) {
			emit(fID, "invalid id "+quote(n.ID)+": "+idRule)
		}
	}
	if bad&fTitle == 0 {
		if present&fTitle == 0 {
			emit(fTitle, `missing required field "title"`)
		} else if strings.TrimSpace(n.Title) == "" {
			emit(fTitle, `field "title" is empty`)
		}
	}
	if bad&fMaxAttempts == 0 && n.MaxAttempts != nil && *n.MaxAttempts < 1 {
		emit(fMaxAttempts, fmt.Sprintf(`field "max_attempts" must be at least 1, found %d`, *n.MaxAttempts))
	}
	checkSpendFields(n, bad, emit)
	if bad&fAttempts == 0 && n.Attempts < 0 {
		emit(fAttempts, fmt.Sprintf(`field "attempts" must be 0 or more, found %d`, n.Attempts))
	}
	if bad&fRemoves == 0 {
		if msg := removesRule(n.Removes); msg != "" {
			emit(fRemoves, msg)
		}
	}
	if bad&fStatus == 0 && present&fStatus != 0 && !n.Status.Valid() {
		emit(fStatus, "invalid status "+quote(string(n.Status))+`: use "open", "done" or "blocked"`)
	}
	if bad&(fStatus|fBlockedReason) == 0 && n.BlockedReason != "" && n.Status != StatusBlocked {
		emit(fBlockedReason, `field "blocked_reason" is only allowed when status is "blocked"; remove it or set the status`)
	}
}

// Bounds on a node's removes.
const (
	MaxRemoves    = 1000
	maxRemoveName = 1024
)

// removesRule checks a node's removes: test names, each non-blank, on
// one line, within maxRemoveName bytes, none twice, at most MaxRemoves.
// It returns what is wrong, "" when nothing is.
func removesRule(names []string) string {
	if len(names) > MaxRemoves {
		return fmt.Sprintf(`field "removes" lists %d tests; at most %d are allowed (name a package or a class to remove all of its tests)`, len(names), MaxRemoves)
	}
	seen := make(map[string]bool, len(names))
	for k, name := range names {
		switch {
		case strings.TrimSpace(name) == "":
			return fmt.Sprintf(`field "removes" item %d is empty: give the name of a test the task removes, as its report names it`, k+1)
		case len(name) > maxRemoveName:
			return fmt.Sprintf(`field "removes" item %d is %d bytes long; at most %d`, k+1, len(name), maxRemoveName)
		case strings.ContainsFunc(name, unicode.IsControl):
			return fmt.Sprintf(`field "removes" item %d holds a control character (a line break?): a test name is one line`, k+1)
		case seen[name]:
			return fmt.Sprintf(`field "removes" item %d repeats %s`, k+1, quote(name))
		}
		seen[name] = true
	}
	return ""
}

// flat is a tree laid out in depth-first pre-order, so that a subtree is
// the index range [i, end[i]) and every walk is a loop, not a recursion.
type flat struct {
	nodes  []*Node
	parent []int32 // -1 for the root
	end    []int32 // one past the last index of i's subtree
	level  []int32 // 0 for the root
	seg    []string

	// Source positions, kept only when the tree was parsed: the byte
	// offsets of each node's object and id value, and of its depends_on
	// entries (depOffs[depOffStart[i]+k] for entry k).
	pos         bool
	objOffs     []int32
	idOffs      []int32
	depOffStart []int32
	depOffs     []int32
}

func (fl *flat) add(n *Node, parent int32, seg string) int32 {
	i := int32(len(fl.nodes))
	fl.nodes = append(fl.nodes, n)
	fl.parent = append(fl.parent, parent)
	lvl := int32(0)
	if parent >= 0 {
		lvl = fl.level[parent] + 1
	}
	fl.level = append(fl.level, lvl)
	fl.seg = append(fl.seg, seg)
	return i
}

// finish computes end once every node has been added.
func (fl *flat) finish() {
	n := len(fl.nodes)
	fl.end = make([]int32, n)
	for i := range fl.end {
		fl.end[i] = int32(i + 1)
	}
	for i := n - 1; i > 0; i-- {
		if p := fl.parent[i]; fl.end[i] > fl.end[p] {
			fl.end[p] = fl.end[i]
		}
	}
}

func (fl *flat) hasKids(i int32) bool { return fl.end[i] > i+1 }

// contains reports whether b is a strict descendant of a.
func (fl *flat) contains(a, b int32) bool { return a < b && b < fl.end[a] }

// path joins the segments from the root to i with '/'.
func (fl *flat) path(i int32) string {
	var segs []string
	for ; i >= 0; i = fl.parent[i] {
		segs = append(segs, fl.seg[i])
	}
	slices.Reverse(segs)
	return strings.Join(segs, "/")
}

// segment names a node in a path: its id, or where it sits when the id is
// missing or invalid: "(root)", or "(child 2)" for the second child ('('
// never occurs in an id).
func segment(id string, parent, k int32) string {
	switch {
	case ValidID(id):
		return id
	case parent < 0:
		return "(root)"
	default:
		return fmt.Sprintf("(child %d)", k+1)
	}
}

// objOff is the byte offset of node i's object, or -1.
func (fl *flat) objOff(i int32) int {
	if !fl.pos {
		return -1
	}
	return int(fl.objOffs[i])
}

// idOff is the byte offset of node i's id value, or -1.
func (fl *flat) idOff(i int32) int {
	if !fl.pos {
		return -1
	}
	return int(fl.idOffs[i])
}

// depOff is the byte offset of node i's k-th depends_on entry, or -1.
func (fl *flat) depOff(i int32, k int) int {
	if !fl.pos {
		return -1
	}
	return int(fl.depOffs[int(fl.depOffStart[i])+k])
}

// flattenNodes lays out a tree of structs. With a collector it also
// reports nil children and nodes that appear twice (which would make the
// walk endless); without one the tree must already be valid.
func flattenNodes(root *Node, c *collector) *flat {
	fl := &flat{}
	n := countNodes(root, 1<<22)
	if n > 0 {
		fl.nodes = make([]*Node, 0, n)
		fl.parent = make([]int32, 0, n)
		fl.level = make([]int32, 0, n)
		fl.seg = make([]string, 0, n)
	}
	type item struct {
		n         *Node
		parent, k int32
	}
	stack := []item{{root, -1, -1}}
	var seen map[*Node]struct{}
	if c != nil {
		seen = make(map[*Node]struct{}, n)
		seen[root] = struct{}{}
	}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		i := fl.add(it.n, it.parent, segment(it.n.ID, it.parent, it.k))
		mark := len(stack)
		for k, ch := range it.n.Children {
			if ch == nil {
				if c != nil {
					c.addf(i, -1, `field "children" item %d is null`, k+1)
				}
				continue
			}
			if seen != nil {
				if _, dup := seen[ch]; dup {
					c.addf(i, -1, `field "children" item %d is a node that already appears elsewhere in the tree`, k+1)
					continue
				}
				seen[ch] = struct{}{}
			}
			stack = append(stack, item{ch, i, int32(k)})
		}
		slices.Reverse(stack[mark:]) // the first child is visited next
	}
	fl.finish()
	return fl
}

// countNodes counts the nodes below root, for sizing; it gives up (0) past
// limit visits, which only a tree whose nodes form a pointer cycle reaches.
func countNodes(root *Node, limit int) int {
	stack := []*Node{root}
	n := 0
	for len(stack) > 0 {
		nd := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n++; n > limit {
			return 0
		}
		for _, ch := range nd.Children {
			if ch != nil {
				stack = append(stack, ch)
			}
		}
	}
	return n
}

// Validate checks the semantic rules of §2 on a tree held in memory: the
// rules Parse applies after reading the file, without the JSON-level ones.
// The runner calls it again after changing the tree. file only labels the
// problems. It returns nil or a *ValidationError.
func (t *Tree) Validate(file string) error {
	c := &collector{file: file}
	if t == nil {
		c.add(-1, -1, "no tree")
		return c.err()
	}
	if t.Version != Version {
		c.addf(-1, -1, "unsupported version %d (this runner reads version %d)", t.Version, Version)
	}
	if t.Root == nil {
		c.add(-1, -1, `missing required field "root"`)
		return c.err()
	}
	fl := flattenNodes(t.Root, c)
	c.fl = fl
	for i, n := range fl.nodes {
		var present fieldSet
		if n.ID != "" {
			present |= fID
		}
		if n.Title != "" {
			present |= fTitle
		}
		if n.Status != "" {
			present |= fStatus
		}
		checkFields(n, present, 0, func(_ fieldSet, msg string) { c.add(int32(i), -1, msg) })
		for k, ch := range n.Checks {
			checkRules(ch, n.Checks[:k], func(_ int, msg string) { c.addf(int32(i), -1, `field "checks" item %d: %s`, k+1, msg) })
		}
	}
	c.checkRelations(fl)
	return c.err()
}

// checkRelations applies the rules between nodes: depth, unique ids,
// depends_on targets, and dependency cycles.
func (c *collector) checkRelations(fl *flat) {
	c.phase = 1
	n := int32(len(fl.nodes))
	for i := int32(0); i < n; i++ {
		if fl.level[i] == MaxNodeDepth+1 {
			c.addf(i, fl.objOff(i), "node nested %d levels below the root; at most %d are allowed", fl.level[i], MaxNodeDepth)
		}
	}
	byID := make(map[string]int32, n)
	for i := int32(0); i < n; i++ {
		id := fl.nodes[i].ID
		if !ValidID(id) {
			continue // reported by checkFields
		}
		if first, dup := byID[id]; dup {
			c.addSee(i, fl.idOff(i), "duplicate id "+quote(id), first, fl.idOff(first))
			continue
		}
		byID[id] = i
	}
	depStart := make([]int32, n+1)
	var depTo, depK []int32
	for i := int32(0); i < n; i++ {
		depStart[i] = int32(len(depTo))
		nd := fl.nodes[i]
		for k, d := range nd.DependsOn {
			j, ok := byID[d]
			switch {
			case d == nd.ID:
				c.add(i, fl.depOff(i, k), "depends_on names the node itself")
			case !ok:
				c.add(i, fl.depOff(i, k), "depends_on names unknown id "+quote(d))
			case fl.contains(j, i):
				c.addf(i, fl.depOff(i, k), "depends_on names %q, an ancestor of this node; a node cannot wait for its own ancestor", d)
			case fl.contains(i, j):
				c.addf(i, fl.depOff(i, k), "depends_on names %q, a descendant of this node; a node cannot wait for its own descendant", d)
			default:
				depTo = append(depTo, j)
				depK = append(depK, int32(k))
			}
		}
	}
	depStart[n] = int32(len(depTo))
	c.checkCycles(fl, depStart, depTo, depK)
}

// checkCycles finds dependency deadlocks. Each node i has two vertices:
// ready(i) = i ("i may start") and done(i) = n+i ("i is done"), with edges
// to what they wait for:
//
//	ready(i) -> ready(parent(i))   a node inherits its ancestors' depends_on
//	ready(i) -> done(d)            for each d in i's depends_on
//	done(i)  -> ready(i)           when i is a leaf
//	done(i)  -> done(c)            for each child c
//
// Without depends_on edges the graph is acyclic, so every strongly
// connected component of more than one vertex is a deadlock made of
// depends_on entries. Each is reported once, naming one cycle in it.
// Everything is iterative and linear in nodes plus dependencies.
func (c *collector) checkCycles(fl *flat, depStart, depTo, depK []int32) {
	if len(depTo) == 0 {
		return
	}
	n := int32(len(fl.nodes))
	nv := 2 * n
	off := make([]int32, nv+1)
	for i := int32(0); i < n; i++ {
		off[i+1] += depStart[i+1] - depStart[i]
		if p := fl.parent[i]; p >= 0 {
			off[i+1]++
			off[n+p+1]++
		}
		if !fl.hasKids(i) {
			off[n+i+1]++
		}
	}
	for v := int32(1); v <= nv; v++ {
		off[v] += off[v-1]
	}
	adj := make([]int32, off[nv])
	fill := slices.Clone(off[:nv])
	put := func(v, w int32) { adj[fill[v]] = w; fill[v]++ }
	for i := int32(0); i < n; i++ {
		if p := fl.parent[i]; p >= 0 {
			put(i, p)
			put(n+p, n+i)
		}
		for e := depStart[i]; e < depStart[i+1]; e++ {
			put(i, n+depTo[e])
		}
		if !fl.hasKids(i) {
			put(n+i, i)
		}
	}

	// Tarjan's algorithm with an explicit call stack.
	index := make([]int32, nv) // 0: not visited yet; otherwise visit order + 1
	low := make([]int32, nv)
	onStack := make([]bool, nv)
	comp := make([]int32, nv)
	for v := range comp {
		comp[v] = -1
	}
	type frame struct{ v, e int32 }
	var call []frame
	var stack []int32
	var counter, sccs int32
	type cycle struct {
		x    int32
		k    int32
		text string
	}
	var cycles []cycle
	var prev, visit []int32
	var queue []int32

	visitVertex := func(v int32) {
		counter++
		index[v], low[v] = counter, counter
		stack = append(stack, v)
		onStack[v] = true
		call = append(call, frame{v, off[v]})
	}
	for s := int32(0); s < nv; s++ {
		if index[s] != 0 {
			continue
		}
		visitVertex(s)
		for len(call) > 0 {
			top := len(call) - 1
			v := call[top].v
			if e := call[top].e; e < off[v+1] {
				call[top].e++
				w := adj[e]
				if index[w] == 0 {
					visitVertex(w)
				} else if onStack[w] && index[w] < low[v] {
					low[v] = index[w]
				}
				continue
			}
			call = call[:top]
			if top > 0 {
				if u := call[top-1].v; low[v] < low[u] {
					low[u] = low[v]
				}
			}
			if low[v] != index[v] {
				continue
			}
			// v is the root of a component: pop it.
			j := len(stack) - 1
			for stack[j] != v {
				j--
			}
			members := stack[j:]
			stack = stack[:j]
			for _, w := range members {
				onStack[w] = false
			}
			if len(members) == 1 {
				continue
			}
			sccs++
			for _, w := range members {
				comp[w] = sccs
			}
			if prev == nil {
				prev = make([]int32, nv)
				visit = make([]int32, nv)
			}
			cy := describeCycle(fl, members, sccs, comp, off, adj, depStart, depTo, prev, visit, &queue)
			cycles = append(cycles, cycle{cy.x, depK[cy.e], cy.text})
		}
	}
	slices.SortFunc(cycles, func(a, b cycle) int { return int(a.x - b.x) })
	for _, cy := range cycles {
		c.add(cy.x, fl.depOff(cy.x, int(cy.k)), "dependency cycle: "+cy.text)
	}
}

type foundCycle struct {
	x, e int32 // the node the cycle is reported on, and its depends_on edge
	text string
}

// describeCycle picks, in one strongly connected component, the depends_on
// edge of the earliest node in the tree, finds the shortest way back to
// that node by breadth-first search, and renders the cycle, e.g.
// "a -> b -> a" or "a -> ops (contains mul) -> a" when mul, inside ops,
// depends on a.
func describeCycle(fl *flat, members []int32, id int32, comp, off, adj, depStart, depTo, prev, visit []int32, queue *[]int32) foundCycle {
	n := int32(len(fl.nodes))
	x, edge := int32(-1), int32(-1)
	for _, v := range members {
		if v >= n || (x >= 0 && v > x) {
			continue
		}
		for e := depStart[v]; e < depStart[v+1]; e++ {
			if comp[n+depTo[e]] == id {
				x, edge = v, e
				break
			}
		}
	}
	start := n + depTo[edge]
	q := append((*queue)[:0], start)
	visit[start], prev[start] = id, -1
	for h := 0; h < len(q) && visit[x] != id; h++ {
		u := q[h]
		for e := off[u]; e < off[u+1]; e++ {
			if w := adj[e]; comp[w] == id && visit[w] != id {
				visit[w], prev[w] = id, u
				q = append(q, w)
			}
		}
	}
	*queue = q
	var path []int32 // from x back to start
	for v := x; v != -1; v = prev[v] {
		path = append(path, v)
	}
	slices.Reverse(path)
	xs, ds := []int32{x}, []int32{depTo[edge]}
	for j := 0; j+1 < len(path); j++ {
		if u, w := path[j], path[j+1]; u < n && w >= n {
			xs = append(xs, u)
			ds = append(ds, w-n)
		}
	}
	tokens := []string{fl.seg[x]}
	for j, d := range ds {
		next := xs[(j+1)%len(xs)]
		tok := fl.seg[d]
		switch {
		case d == next:
		case fl.contains(d, next):
			tok += " (contains " + fl.seg[next] + ")"
		case fl.contains(next, d):
			tok += " (inside " + fl.seg[next] + ")"
		}
		tokens = append(tokens, tok)
	}
	if len(tokens) > 14 {
		cut := len(tokens) - 13
		tokens = slices.Concat(tokens[:10], []string{fmt.Sprintf("... (%d more)", cut)}, tokens[len(tokens)-3:])
	}
	return foundCycle{x: x, e: edge, text: strings.Join(tokens, " -> ")}
}

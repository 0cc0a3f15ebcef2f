package tree

// Index answers lookups on a tree that has passed validation: node by id,
// parent, and path. It is built once in linear time; rebuild it (or use
// AddChildren, which does) after changing the tree's shape.
type Index struct {
	root *Node
	fl   *flat
	byID map[string]int32
	// depends_on resolved to node indexes (-1 for an unknown id): the
	// entries of node i are depTo[depStart[i]:depStart[i+1]].
	depStart []int32
	depTo    []int32
}

// NewIndex indexes t, which must be valid (see Validate). When an id is
// used twice, the first node in depth-first order wins.
func NewIndex(t *Tree) *Index {
	ix := &Index{byID: map[string]int32{}}
	if t == nil || t.Root == nil {
		ix.fl = &flat{}
		ix.depStart = []int32{0}
		return ix
	}
	ix.root = t.Root
	ix.fl = flattenNodes(t.Root, nil)
	n := int32(len(ix.fl.nodes))
	ix.byID = make(map[string]int32, n)
	for i := n - 1; i >= 0; i-- {
		ix.byID[ix.fl.nodes[i].ID] = i
	}
	ix.depStart = make([]int32, n+1)
	for i := int32(0); i < n; i++ {
		ix.depStart[i] = int32(len(ix.depTo))
		for _, d := range ix.fl.nodes[i].DependsOn {
			j, ok := ix.byID[d]
			if !ok {
				j = -1
			}
			ix.depTo = append(ix.depTo, j)
		}
	}
	ix.depStart[n] = int32(len(ix.depTo))
	return ix
}

// Len is the number of nodes in the tree.
func (ix *Index) Len() int { return len(ix.fl.nodes) }

// Node returns the node with the given id, or nil.
func (ix *Index) Node(id string) *Node {
	if i, ok := ix.byID[id]; ok {
		return ix.fl.nodes[i]
	}
	return nil
}

// Parent returns the parent of the node with the given id; nil for the
// root or an unknown id.
func (ix *Index) Parent(id string) *Node {
	if i, ok := ix.byID[id]; ok {
		if p := ix.fl.parent[i]; p >= 0 {
			return ix.fl.nodes[p]
		}
	}
	return nil
}

// Path returns the ids from the root to the node joined by '/', such as
// "calc/ops"; "" for an unknown id.
func (ix *Index) Path(id string) string {
	if i, ok := ix.byID[id]; ok {
		return ix.fl.path(i)
	}
	return ""
}

// deps returns node i's depends_on entries as node indexes (-1 for an
// unknown id).
func (ix *Index) deps(i int32) []int32 { return ix.depTo[ix.depStart[i]:ix.depStart[i+1]] }

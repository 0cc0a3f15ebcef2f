// Package tree loads, validates, selects from and canonically writes the
// task tree in .runner/tree.json.
//
// Beyond the letter of the file format, two rules give the tree its
// meaning: a node's depends_on holds for every node below it (so a node
// that is decomposed keeps waiting for what it waited for), and a node
// with children is done exactly when all its leaves are. Under these
// rules a node depending on its own ancestor or descendant can never
// run, which is why validation refuses both, and dependency cycles are
// looked for through parents as well ("a -> ops (contains mul) -> a").
package tree

// Status is the runner-owned state of a node.
type Status string

// Node statuses. A node without a status is open.
const (
	StatusOpen    Status = "open"
	StatusDone    Status = "done"
	StatusBlocked Status = "blocked"
)

// Version is the only tree file format version this runner reads.
const Version = 1

// Tree is the whole task tree as stored in tree.json.
type Tree struct {
	Version int   `json:"version"`
	Root    *Node `json:"root"`
}

// Node is one task. Fields up to Children are human-owned; Status,
// Attempts and BlockedReason are owned by the runner. The field order here
// is the key order of the canonical file.
type Node struct {
	ID         string   `json:"id"`
	Title      string   `json:"title"`
	Goal       string   `json:"goal,omitempty"`
	Acceptance []string `json:"acceptance,omitempty"`
	Checks     []Check  `json:"checks,omitempty"`
	// Removes names the tests this node's work removes or renames (SPEC
	// §18): a test that passed on the baseline and is absent from a
	// report afterwards is a regression unless one of its ancestors or
	// itself lists it.
	Removes     []string `json:"removes,omitempty"`
	DependsOn   []string `json:"depends_on,omitempty"`
	MaxAttempts *int     `json:"max_attempts,omitempty"`
	// MaxCostUSD and MaxTokens are the task's own spend caps over all its
	// attempts (SPEC §24), in place of loop.task_max_cost_usd and
	// loop.task_max_tokens; 0 lifts the cap for this task. A group's hold
	// for each task below it that sets none.
	MaxCostUSD *float64 `json:"max_cost_usd,omitempty"`
	MaxTokens  *int64   `json:"max_tokens,omitempty"`
	// Executors is the task's own ladder of executors (names of the
	// config's [executor] and [[fallback]]), in place of loop.escalate;
	// a group's holds for the tasks below it that give none.
	Executors []string `json:"executors,omitempty"`

	Status        Status `json:"status,omitempty"`
	Attempts      int    `json:"attempts,omitzero"`
	BlockedReason string `json:"blocked_reason,omitempty"`

	Children []*Node `json:"children,omitempty"`
}

// Check is one of a node's own checks (SPEC §18): a command with the keys
// of a [[guard]], run like the guards to judge this node's work. Timeout
// and OutputLimit keep the text of the file ("10m", "1MiB"); "" takes
// the guards' defaults.
type Check struct {
	Name        string `json:"name"`
	Run         string `json:"run"`
	Timeout     string `json:"timeout,omitempty"`
	OutputLimit string `json:"output_limit,omitempty"`
	Report      string `json:"report,omitempty"`
}

// IsLeaf reports whether n has no children. Only leaves are executed.
func (n *Node) IsLeaf() bool { return len(n.Children) == 0 }

// EffectiveStatus returns n's status with the default applied.
func (n *Node) EffectiveStatus() Status {
	if n.Status == "" {
		return StatusOpen
	}
	return n.Status
}

// AttemptLimit returns n's max_attempts, or def when the node sets none.
func (n *Node) AttemptLimit(def int) int {
	if n.MaxAttempts != nil {
		return *n.MaxAttempts
	}
	return def
}

// Walk calls fn on every node of the tree, depth first, parents before
// their children, children in their order: the order of §2's selection.
func (t *Tree) Walk(fn func(*Node)) {
	if t.Root == nil {
		return
	}
	stack := []*Node{t.Root}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		fn(n)
		for i := len(n.Children) - 1; i >= 0; i-- {
			stack = append(stack, n.Children[i])
		}
	}
}

// Find returns the first node with the given id in Walk's order, as
// Index.Node does, without building an index; nil when there is none.
func (t *Tree) Find(id string) *Node {
	var found *Node
	t.Walk(func(n *Node) {
		if found == nil && n.ID == id {
			found = n
		}
	})
	return found
}

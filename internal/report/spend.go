package report

import (
	"sort"

	"github.com/runner-cli/runner/internal/state"
)

// DoneCost is what the tasks an executor finished cost (SPEC §24): each
// task's spend over all its attempts of the window (the ones other rungs
// of its ladder did, and its reviews, included), summed and per task.
type DoneCost struct {
	// Executor ran the attempt that finished the tasks.
	Executor string      `json:"executor"`
	Tasks    int         `json:"tasks"`
	Usage    state.Usage `json:"usage"`
	// PerTask is Usage divided by Tasks.
	PerTask state.Usage `json:"per_task"`
}

// addTaskUsage counts an iteration's usage, its review's included, for
// its task.
func (g *gatherer) addTaskUsage(m *state.Meta) {
	var u state.Usage
	if m.Usage != nil {
		u.Add(*m.Usage)
	}
	if m.Review != nil && m.Review.Usage != nil {
		u.Add(*m.Review.Usage)
	}
	if m.Node == "" || u.IsZero() {
		return
	}
	t := g.taskUsage[m.Node]
	t.Add(u)
	g.taskUsage[m.Node] = t
}

// doneCosts splits the done tasks' spend by the executor that finished
// each, in the order of the executors' names.
func (g *gatherer) doneCosts() []DoneCost {
	by := map[string]*DoneCost{}
	for _, d := range g.rep.Done {
		c := by[d.Executor]
		if c == nil {
			c = &DoneCost{Executor: d.Executor}
			by[d.Executor] = c
		}
		c.Tasks++
		c.Usage.Add(g.taskUsage[d.Node])
	}
	out := []DoneCost{}
	for _, c := range by {
		c.PerTask = c.Usage.Divided(c.Tasks)
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Executor < out[j].Executor })
	return out
}

// rungText says on which rung of its ladder an attempt ran: "rung 2 of 2
// (large)", and the executor that ran it when the rung's could not.
func rungText(executor string, r *state.RungMeta) string {
	if executor == r.Executor || executor == "" {
		return r.String()
	}
	return r.String() + ", run on " + executor
}

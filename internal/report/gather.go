package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/runner-cli/runner/internal/outcome"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/status"
)

// gatherer fills a report from the journal records of its window and the
// meta.json of each iteration they name.
type gatherer struct {
	p       state.Paths
	rep     *Report
	tree    *status.TreeNode
	paths   map[string]string // node id → path in the tree
	titles  map[string]string
	running int // the iteration a live runner works on, 0 if none
	// engineUnprotected says why the engine is not protected ("": it is,
	// or there is none).
	engineUnprotected string

	// blockedBy is the iteration of the window that blocked each node,
	// and the questions its agent asked.
	blockedBy map[string]blockedAt
	executors map[string]*ExecutorUsage
	taskUsage map[string]state.Usage // node → its iterations' usage in the window
	anomalies map[string]bool        // kind and iteration of those found in meta.json
	first     map[int]int            // iteration → index of its first record in the window
}

type blockedAt struct {
	iteration int
	questions []string
	summary   string
}

func newGatherer(p state.Paths, st *status.Report, rep *Report) *gatherer {
	g := &gatherer{p: p, rep: rep, tree: st.Tree, paths: map[string]string{}, titles: map[string]string{},
		blockedBy: map[string]blockedAt{}, executors: map[string]*ExecutorUsage{}, taskUsage: map[string]state.Usage{}, anomalies: map[string]bool{}, first: map[int]int{}}
	var walk func(n *status.TreeNode, parent string)
	walk = func(n *status.TreeNode, parent string) {
		path := n.ID
		if parent != "" {
			path = parent + "/" + n.ID
		}
		g.paths[n.ID], g.titles[n.ID] = path, n.Title
		for _, c := range n.Children {
			walk(c, path)
		}
	}
	if st.Tree != nil {
		walk(st.Tree, "")
	}
	if st.Running != nil && st.Running.Alive {
		g.running = st.Running.Iteration
	}
	g.engineUnprotected = st.EngineUnprotected
	return g
}

// gather reports on the records of the window, iteration by iteration,
// then the tasks blocked now and the usage.
func (g *gatherer) gather(recs []state.Record) {
	byIteration := map[int][]state.Record{}
	for i, r := range recs {
		if g.rep.Window.Kind == KindIteration && r.Iteration > 0 && r.Iteration < g.rep.Window.FromIteration {
			continue
		}
		switch r.Event {
		case state.EventRateLimited:
			g.rep.RateLimits.Waits++
			g.rep.RateLimits.WaitedMS += r.WaitMS
		case state.EventSkipped:
			at := r.Time
			g.rep.Anomalies = append(g.rep.Anomalies, Anomaly{Kind: AnomalyTaskSkipped, Node: r.Node, Path: g.path(r.Node), Time: &at,
				Detail: "`runner skip` counted it done without running it" + suffix(": ", oneLine(r.Summary)), pos: i})
			continue
		}
		if r.Iteration > 0 {
			if _, seen := byIteration[r.Iteration]; !seen {
				g.first[r.Iteration] = i
			}
			byIteration[r.Iteration] = append(byIteration[r.Iteration], r)
		}
	}
	iterations := make([]int, 0, len(byIteration))
	for n := range byIteration {
		iterations = append(iterations, n)
	}
	sort.Ints(iterations)
	for _, n := range iterations {
		g.iteration(n, byIteration[n])
	}
	if len(iterations) > 0 {
		g.rep.Window.First, g.rep.Window.Last = iterations[0], iterations[len(iterations)-1]
		g.rep.Window.Iterations = len(iterations)
	}
	// In the order they happened: an iteration's where it began.
	sort.SliceStable(g.rep.Anomalies, func(i, j int) bool { return g.rep.Anomalies[i].pos < g.rep.Anomalies[j].pos })
	g.blocked()
	g.usage()
	g.rep.Usage.DoneByExecutor = g.doneCosts()
}

// iteration reports on iteration n from its meta.json or, when its run
// folder is gone (loop.keep_runs), from its journal records.
func (g *gatherer) iteration(n int, recs []state.Record) {
	m, err := state.LoadMeta(g.p.RunDir(n))
	if err != nil {
		m = fromJournal(n, recs)
	}
	if m.NodePath == "" {
		m.NodePath = g.path(m.Node)
	}
	if n == g.running {
		return // under way: `running` says so
	}
	g.addUsage(m)
	g.addTaskUsage(m)
	g.metaAnomalies(m)
	g.journalAnomalies(m, recs)
	switch m.Phase {
	case state.PhaseRecorded:
		g.outcome(m)
	case state.PhaseAborted:
		g.rep.Interrupted = append(g.rep.Interrupted, Interruption{Iteration: n, Node: m.Node, Path: m.NodePath,
			Kind: SetAside, Reason: oneLine(m.Note)})
	default:
		g.rep.Interrupted = append(g.rep.Interrupted, Interruption{Iteration: n, Node: m.Node, Path: m.NodePath, Kind: Unfinished,
			Reason: fmt.Sprintf("the runner stopped in phase %s; the next `runner run` resolves it", m.Phase)})
	}
}

// outcome reports a recorded iteration by its outcome.
func (g *gatherer) outcome(m *state.Meta) {
	msg := parseMessage(m.Message)
	switch m.Outcome {
	case state.OutcomeDone:
		d := Done{Iteration: m.Iteration, Node: m.Node, Path: m.NodePath, Title: g.titles[m.Node], Summary: oneLine(m.Summary), Executor: m.Executor, Worker: m.Worker,
			Rung: m.Rung}
		if c := m.Checkpoint; c != nil {
			d.Commit, d.Branch, d.Diffstat = c.Commit, c.Branch, diffSummary(c.Diffstat)
		}
		if m.Review != nil {
			d.Review = m.Review.Verdict
		}
		g.rep.Done = append(g.rep.Done, d)
	case state.OutcomeGuardFailed, state.OutcomeRetry, state.OutcomeExecutorError, state.OutcomeCostCap:
		g.rep.Failed = append(g.rep.Failed, Failure{Iteration: m.Iteration, Node: m.Node, Path: m.NodePath,
			Attempt: m.Attempt, MaxAttempts: m.MaxAttempts, Outcome: m.Outcome, Reason: failureReason(m),
			AttemptRef: m.AttemptRef, Executor: m.Executor, Worker: m.Worker, Rung: m.Rung, CostCap: m.CostCap})
	case state.OutcomeDecomposed:
		s := Split{Iteration: m.Iteration, Node: m.Node, Path: m.NodePath, Children: []string{}}
		for _, c := range msg.Children {
			s.Children = append(s.Children, c.ID)
		}
		g.rep.Decomposed = append(g.rep.Decomposed, s)
	case state.OutcomeInterrupted:
		g.rep.Interrupted = append(g.rep.Interrupted, Interruption{Iteration: m.Iteration, Node: m.Node, Path: m.NodePath,
			Kind: Interrupted, Reason: interruptReason(m.Summary), AttemptSpent: !m.NoAttempt, Worker: m.Worker})
	}
	if m.NodeStatus == "blocked" {
		at := blockedAt{iteration: m.Iteration}
		if m.Outcome == state.OutcomeBlocked {
			at.questions, at.summary = msg.Questions, m.Summary
		}
		g.blockedBy[m.Node] = at
	}
}

// blocked lists the tasks blocked now, in tree order.
func (g *gatherer) blocked() {
	var walk func(n *status.TreeNode)
	walk = func(n *status.TreeNode) {
		if len(n.Children) == 0 && n.Status == "blocked" {
			first := "runner answer " + n.ID + ` "your answer"`
			if n.BlockedReason == outcome.ReasonExhausted || outcome.IsCostCap(n.BlockedReason) {
				first = "runner reset " + n.ID // once the cause is fixed, or to give it its budget again
			}
			b := Blocked{Node: n.ID, Path: g.path(n.ID), Title: n.Title, Reason: n.BlockedReason, Questions: []string{},
				Commands: []string{first, "runner skip " + n.ID}}
			if at, ok := g.blockedBy[n.ID]; ok {
				b.Iteration = at.iteration
				b.Questions = append(b.Questions, at.questions...)
				if len(at.questions) > 0 {
					b.Summary = oneLine(at.summary)
				}
			}
			g.rep.Blocked = append(g.rep.Blocked, b)
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	if g.tree != nil {
		walk(g.tree)
	}
}

// addUsage counts an iteration's usage, its review's included.
func (g *gatherer) addUsage(m *state.Meta) {
	g.addExecutor(m.Executor, m.Usage)
	if m.Review != nil && m.Review.Usage != nil {
		g.addExecutor(state.ReviewLabel(m.Review.Executor), m.Review.Usage)
	}
}

func (g *gatherer) addExecutor(name string, u *state.Usage) {
	e := g.executors[name]
	if e == nil {
		e = &ExecutorUsage{Name: name}
		g.executors[name] = e
	}
	e.Iterations++
	if u != nil {
		e.Usage.Add(*u)
		g.rep.Usage.Total.Add(*u)
	}
}

// usage lists the executors' shares when any iteration names its
// executor.
func (g *gatherer) usage() {
	named := false
	for name := range g.executors {
		named = named || name != ""
	}
	if !named {
		return
	}
	for _, e := range g.executors {
		g.rep.Usage.Executors = append(g.rep.Usage.Executors, *e)
	}
	sort.Slice(g.rep.Usage.Executors, func(i, j int) bool { return g.rep.Usage.Executors[i].Name < g.rep.Usage.Executors[j].Name })
}

// metaAnomalies reports what meta.json says went wrong: protected files
// changed, a conflict, a review rejected or skipped.
func (g *gatherer) metaAnomalies(m *state.Meta) {
	add := func(kind, detail string, paths []string) {
		g.anomalies[fmt.Sprintf("%s/%d", kind, m.Iteration)] = true
		g.rep.Anomalies = append(g.rep.Anomalies, Anomaly{Kind: kind, Iteration: m.Iteration, Node: m.Node, Path: m.NodePath,
			Paths: paths, Detail: detail, pos: g.first[m.Iteration]})
	}
	if len(m.Tamper) > 0 {
		var paths, changes []string
		for _, t := range m.Tamper {
			paths = append(paths, t.Path)
			changes = append(changes, t.Path+" ("+t.Change+")")
		}
		add(AnomalyTamper, "the agent changed "+strings.Join(changes, ", ")+
			fmt.Sprintf("; reverted, its versions kept in %s", g.p.Rel(g.p.RunDir(m.Iteration))), paths)
	}
	if m.Unconfined != "" && !g.anomalies[AnomalyUnconfined] {
		g.anomalies[AnomalyUnconfined] = true
		add(AnomalyUnconfined, "from this iteration on, the agent was not confined to its worktree: "+m.Unconfined+"; its changes to the runner's files and .git were checked after each run", nil)
	}
	if m.Refused != "" {
		add(AnomalyRefused, m.Refused+"; the iteration was lost, and cost the task no attempt", nil)
	}
	if g.engineUnprotected != "" && !g.anomalies[AnomalyEngineUnprotected] {
		g.anomalies[AnomalyEngineUnprotected] = true
		add(AnomalyEngineUnprotected, "the iterations ran on workers while the engine was not protected: "+g.engineUnprotected, nil)
	}
	if len(m.Openings) > 0 && !g.anomalies[AnomalyRoomOpen] {
		g.anomalies[AnomalyRoomOpen] = true
		add(AnomalyRoomOpen, "from this iteration on, the agent's room left open: "+strings.Join(m.Openings, "; "), nil)
	}
	emptyFailed := len(m.Guards) == 1 && m.Guards[0].Name == state.EmptyDoneGuard
	switch {
	case m.NoChange && (m.Outcome == state.OutcomeDone || emptyFailed):
		add(AnomalyEmptyDone, "the agent said done and changed nothing in the working tree", nil)
	case m.CommandsFailed && (m.Outcome == state.OutcomeDone || emptyFailed):
		add(AnomalyEmptyDone, "the agent said done and every command it ran failed", nil)
	}
	if len(m.Vacuous) > 0 {
		add(AnomalyVacuousCheck, "check "+strings.Join(m.Vacuous, ", ")+" passed on the untouched checkpoint before any work: it cannot tell whether the task is done", nil)
	}
	if c := m.Conflict; c != nil {
		detail := "its commit conflicted with the run branch"
		if c.Kind == "guards" {
			detail = "its guards failed once its commit was integrated onto the run branch"
		}
		if c.Onto != "" {
			detail += " at " + shortID(c.Onto)
		}
		add(AnomalyConflict, detail+"; the task was sent back", c.Files)
	}
	if r := m.Review; r != nil {
		switch r.Verdict {
		case "reject":
			add(AnomalyReviewRejected, orNone(oneLine(strings.Join(r.Reasons, "; ")), "no reason given"), nil)
		case "skipped":
			add(AnomalyReviewSkipped, "accepted without a review (review.on_error = \"accept\")"+suffix(": ", oneLine(r.Error)), nil)
		}
	}
}

// journalAnomalies reports the journal's tamper, rejected and conflict
// records that meta.json did not already account for (its run folder
// pruned, say).
func (g *gatherer) journalAnomalies(m *state.Meta, recs []state.Record) {
	kinds := map[string]string{state.EventTamper: AnomalyTamper, state.EventRejected: AnomalyReviewRejected, state.EventConflict: AnomalyConflict,
		state.EventRefused: AnomalyRefused}
	for _, r := range recs {
		kind, ok := kinds[r.Event]
		if !ok || g.anomalies[fmt.Sprintf("%s/%d", kind, r.Iteration)] {
			continue
		}
		g.anomalies[fmt.Sprintf("%s/%d", kind, r.Iteration)] = true
		at := r.Time
		detail := map[string]string{AnomalyTamper: "the agent changed files it may not change",
			AnomalyReviewRejected: "no reason given", AnomalyConflict: "its commit did not integrate onto the run branch",
			AnomalyRefused: "a worker's result that could not be verified with the engine key was refused"}[kind]
		if len(r.Paths) > 0 {
			detail = map[string]string{AnomalyTamper: "the agent changed ", AnomalyConflict: "its commit did not integrate onto the run branch: "}[kind] +
				strings.Join(r.Paths, ", ")
		}
		if why := oneLine(r.Summary + r.Error); why != "" {
			detail = or(map[string]string{AnomalyReviewRejected: why}[kind], detail+": "+why)
		}
		g.rep.Anomalies = append(g.rep.Anomalies, Anomaly{Kind: kind, Iteration: r.Iteration, Node: m.Node, Path: m.NodePath,
			Paths: r.Paths, Detail: detail, Time: &at, pos: g.first[r.Iteration]})
	}
}

func (g *gatherer) path(id string) string {
	if p, ok := g.paths[id]; ok {
		return p
	}
	return id
}

package spend

import (
	"sync"

	"github.com/runner-cli/runner/internal/state"
)

// Limit is a cap as one agent run meets it: the cap, and what was spent
// against it before the run.
type Limit struct {
	Cap
	Spent float64 `json:"spent"`
}

// Allowance is what one agent run may spend: the caps it works under,
// each with what was spent against it before. The executor hands Check
// every usage the agent reports while it works (package exec) and stops
// the agent at the first cap reached.
//
// An Allowance with a Meter (Begin) counts the run's caps against the
// Meter's total, which the ledger's bookings and the other agent runs at
// work move while this one works; one without (on a worker, SPEC §22)
// counts them against Spent, as it was when the run started.
type Allowance struct {
	Limits []Limit `json:"limits"`
	// Pending is what the same iteration used before this run and the
	// ledger has not booked yet (earlier runs of its agent after a rate
	// limit, earlier runs of its reviewer): counted as this run's.
	Pending state.Usage `json:"pending"`

	live *Live
}

// NewAllowance is the allowance of an agent run under caps, the task
// having spent task and the run run (the ledger's bookings).
func NewAllowance(caps []Cap, task, run state.Usage) *Allowance {
	a := &Allowance{}
	for _, c := range caps {
		v, _ := c.against(task, run).In(c.Unit)
		a.Limits = append(a.Limits, Limit{Cap: c, Spent: v})
	}
	return a
}

// Capped reports whether any cap bounds the run.
func (a *Allowance) Capped() bool { return a != nil && len(a.Limits) > 0 }

// Exhausted returns the first cap that is reached before the run starts:
// no agent may start under it. Nil when each has something left.
func (a *Allowance) Exhausted() *state.CapHit {
	return a.Check(state.Usage{})
}

// Check returns the first cap, the task's before the run's, that the run
// reaches having used used so far (with Pending, and for the run's caps
// what the other agent runs at work used); nil while none is reached. A
// cost the agent has not reported and no price gives counts as nothing
// yet. Safe to call from the goroutines reading an agent's output.
func (a *Allowance) Check(used state.Usage) *state.CapHit {
	if !a.Capped() {
		return nil
	}
	own := a.Pending
	own.Add(used)
	var others state.Usage
	if a.live != nil {
		others = a.live.set(own)
	}
	for _, scope := range []string{state.ScopeTask, state.ScopeRun} {
		for _, l := range a.Limits {
			if l.Scope != scope {
				continue
			}
			v, known := own.In(l.Unit)
			if !known {
				v = 0
			}
			base := l.Spent
			if scope == state.ScopeRun && a.live != nil {
				base, _ = others.In(l.Unit)
			}
			if total := base + v; total >= l.Cap.Cap {
				return l.hit(total)
			}
		}
	}
	return nil
}

// Static is a copy of a that no longer follows its Meter: its run's caps
// count what the run had spent (booked, and used by the other agents at
// work) now. It is what a worker on another machine checks its agent
// against (SPEC §22); nil stays nil.
func (a *Allowance) Static() *Allowance {
	if a == nil {
		return nil
	}
	s := &Allowance{Limits: append([]Limit(nil), a.Limits...), Pending: a.Pending}
	if a.live == nil {
		return s
	}
	others := a.live.set(a.Pending)
	for i := range s.Limits {
		if s.Limits[i].Scope == state.ScopeRun {
			s.Limits[i].Spent, _ = others.In(s.Limits[i].Unit)
		}
	}
	return s
}

// Meter is what a run has spent: the ledger's bookings (Book) and what
// the agent runs at work now have used so far. The run's caps count both,
// so that agents working at once (parallel slots) never pass them
// together by more than what one report adds.
type Meter struct {
	mu     sync.Mutex
	booked state.Usage
	live   map[*Live]state.Usage
}

// NewMeter is the meter of a run that has spent booked so far.
func NewMeter(booked state.Usage) *Meter {
	return &Meter{booked: booked, live: map[*Live]state.Usage{}}
}

// Spent is what the run has spent: the bookings and what the agent runs
// at work have used so far.
func (m *Meter) Spent() state.Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	total := m.booked
	for _, u := range m.live {
		total.Add(u)
	}
	return total
}

// Book adds what the ledger booked (it is called for every booking).
func (m *Meter) Book(u state.Usage) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.booked.Add(u)
	m.mu.Unlock()
}

// Live is one iteration's agent (or reviewer) at work, from Begin until
// End: what it used counts toward the run's caps until the ledger books
// it.
type Live struct{ m *Meter }

// Begin starts counting a's agent run toward the run's caps (a nil
// Meter: a counts against its Limits' Spent). End it once the ledger has
// booked what it used.
func (m *Meter) Begin(a *Allowance) *Live {
	if m == nil || a == nil {
		return nil
	}
	l := &Live{m: m}
	m.mu.Lock()
	m.live[l] = a.Pending
	m.mu.Unlock()
	a.live = l
	return l
}

// End stops counting the run: what it used is booked now.
func (l *Live) End() {
	if l == nil {
		return
	}
	l.m.mu.Lock()
	delete(l.m.live, l)
	l.m.mu.Unlock()
}

// set records what l's run used so far and returns the run's spend
// without it: the bookings and the other runs at work.
func (l *Live) set(own state.Usage) state.Usage {
	m := l.m
	m.mu.Lock()
	defer m.mu.Unlock()
	m.live[l] = own
	total := m.booked
	for o, u := range m.live {
		if o != l {
			total.Add(u)
		}
	}
	return total
}

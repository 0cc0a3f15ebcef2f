package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/state"
)

// Bounds of what the history reads.
const (
	maxMeta        = 16 << 20 // bytes of a meta.json, as the runner reads it
	journalWindow  = 8 << 20  // bytes read from the end of each journal file
	maxSummary     = 240      // bytes of a summary in the history list
	defaultHistory = 50       // iterations per page
	maxHistory     = 500
)

// Iteration is one line of the history: what meta.json says of an
// iteration, or, when its run folder was pruned (loop.keep_runs) or its
// meta.json is not written yet (the agent still works), what the journal
// says.
type Iteration struct {
	Iteration   int          `json:"iteration"`
	Node        string       `json:"node,omitempty"`
	NodePath    string       `json:"node_path,omitempty"`
	Attempt     int          `json:"attempt,omitempty"`
	MaxAttempts int          `json:"max_attempts,omitempty"`
	Phase       string       `json:"phase,omitempty"`
	StartedAt   *time.Time   `json:"started_at,omitempty"`
	FinishedAt  *time.Time   `json:"finished_at,omitempty"`
	DurationMS  int64        `json:"duration_ms,omitempty"`
	AgentStatus string       `json:"agent_status,omitempty"`
	Guard       string       `json:"guard,omitempty"`
	Outcome     string       `json:"outcome,omitempty"`
	NodeStatus  string       `json:"node_status,omitempty"`
	Summary     string       `json:"summary,omitempty"`
	Usage       *state.Usage `json:"usage,omitempty"`
	// Executor names the executor that ran it, when meta.json says.
	Executor string `json:"executor,omitempty"`
	// Rung is the rung of its task's ladder of executors the attempt was
	// given to (SPEC §24); CostCap the spend cap it was stopped at.
	Rung     *state.RungMeta `json:"rung,omitempty"`
	CostCap  *state.CapHit   `json:"cost_cap,omitempty"`
	InFlight bool            `json:"in_flight,omitempty"`
	// Landing says why the task's work did not land although its guards
	// passed: "conflict", or "guards" when they failed on the run branch.
	Landing string `json:"landing,omitempty"`
	// NoChange says the agent said done and changed nothing;
	// CommandsFailed that every command it ran failed.
	NoChange       bool `json:"no_change,omitempty"`
	CommandsFailed bool `json:"commands_failed,omitempty"`
	// Source is where this came from: "meta", "journal", or "none" when
	// neither holds anything about the iteration.
	Source string `json:"source"`
}

// History is a page of iterations, newest first.
type History struct {
	// Latest is the highest iteration number the files know of.
	Latest     int         `json:"latest"`
	Iterations []Iteration `json:"iterations"`
	// More is set when older iterations than the page's exist.
	More bool `json:"more"`
}

// metaView is the part of meta.json the history shows. Decoding is
// lenient: fields a newer runner adds are ignored here and passed through
// whole by the iteration's own endpoint.
type metaView struct {
	Iteration   int             `json:"iteration"`
	Node        string          `json:"node"`
	NodePath    string          `json:"node_path"`
	Attempt     int             `json:"attempt"`
	MaxAttempts int             `json:"max_attempts"`
	Phase       string          `json:"phase"`
	StartedAt   time.Time       `json:"started_at"`
	FinishedAt  *time.Time      `json:"finished_at"`
	DurationMS  int64           `json:"duration_ms"`
	AgentStatus string          `json:"agent_status"`
	Guard       string          `json:"guard"`
	Outcome     string          `json:"outcome"`
	NodeStatus  string          `json:"node_status"`
	Summary     string          `json:"summary"`
	Usage       *state.Usage    `json:"usage"`
	Executor    json.RawMessage `json:"executor"`
	Rung        *state.RungMeta `json:"rung,omitempty"`
	CostCap     *state.CapHit   `json:"cost_cap,omitempty"`
	// Conflict is set when landing the task failed (a conflict, or the
	// guards failing on the run branch), and NoChange when the agent said
	// done and changed nothing.
	Conflict       *state.ConflictMeta `json:"conflict,omitempty"`
	NoChange       bool                `json:"no_change,omitempty"`
	CommandsFailed bool                `json:"commands_failed,omitempty"`
}

// readMeta reads an iteration's meta.json as raw bytes; a missing one is
// (nil, nil).
func readMeta(p state.Paths, n int) ([]byte, error) {
	data, err := fsutil.ReadLimited(state.MetaFile(p.RunDir(n)), maxMeta, true)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// latest is the highest iteration number with a run folder or in flight.
func latest(p state.Paths, running int) int {
	n, _ := state.LatestRun(p)
	return max(n, running)
}

// loadHistory lists up to limit iterations below before (0: from the
// newest), newest first. running is the iteration in flight, or 0.
func loadHistory(p state.Paths, before, limit, running int) *History {
	h := &History{Latest: latest(p, running), Iterations: []Iteration{}}
	top := h.Latest
	if before > 0 && before-1 < top {
		top = before - 1
	}
	var journal map[int]*Iteration // read once, when a meta.json is missing
	for n := top; n >= 1; n-- {
		if len(h.Iterations) == limit {
			h.More = true
			break
		}
		it := Iteration{Iteration: n, Source: "none"}
		if data, err := readMeta(p, n); err == nil && data != nil {
			var m metaView
			if json.Unmarshal(data, &m) == nil {
				it = fromMeta(n, &m)
			}
		}
		if it.Source == "none" {
			if journal == nil {
				journal = readJournals(p)
			}
			if j := journal[n]; j != nil {
				it = *j
			}
		}
		it.InFlight = n == running
		h.Iterations = append(h.Iterations, it)
	}
	return h
}

func fromMeta(n int, m *metaView) Iteration {
	it := Iteration{Iteration: n, Node: m.Node, NodePath: m.NodePath, Attempt: m.Attempt, MaxAttempts: m.MaxAttempts,
		Phase: m.Phase, FinishedAt: m.FinishedAt, DurationMS: m.DurationMS, AgentStatus: m.AgentStatus, Guard: m.Guard,
		Outcome: m.Outcome, NodeStatus: m.NodeStatus, Summary: firstLine(m.Summary), Usage: m.Usage, Source: "meta", NoChange: m.NoChange, CommandsFailed: m.CommandsFailed,
		Rung: m.Rung, CostCap: m.CostCap}
	if m.Conflict != nil {
		it.Landing = m.Conflict.Kind
	}
	if !m.StartedAt.IsZero() {
		it.StartedAt = &m.StartedAt
	}
	var name string
	var named struct {
		Name string `json:"name"`
	}
	switch {
	case json.Unmarshal(m.Executor, &name) == nil:
		it.Executor = name
	case json.Unmarshal(m.Executor, &named) == nil:
		it.Executor = named.Name
	}
	return it
}

// readJournals gathers what state/journal.1.jsonl and state/journal.jsonl
// say of each iteration, from the last journalWindow bytes of each. Lines
// that do not decode are skipped: the history is for reading, not resume.
func readJournals(p state.Paths) map[int]*Iteration {
	out := map[int]*Iteration{}
	for _, path := range []string{p.OldJournal(), p.Journal()} {
		for _, r := range readJournalTail(path, nil) {
			if r.Iteration == 0 {
				continue
			}
			it := out[r.Iteration]
			if it == nil {
				it = &Iteration{Iteration: r.Iteration, Source: "journal"}
				out[r.Iteration] = it
			}
			at := r.Time
			if r.Node != "" {
				it.Node = r.Node
			}
			switch r.Event {
			case state.EventStarted:
				it.StartedAt, it.Phase = &at, state.PhaseStarted
			case state.EventAgentDone, state.EventGuardsDone:
				it.Phase, it.AgentStatus = r.Event, or(r.AgentStatus, it.AgentStatus)
			case state.EventRecorded, state.EventInterrupted, state.EventAborted:
				it.FinishedAt, it.Phase = &at, r.Event
				it.Outcome = or(r.Outcome, r.Event)
				it.AgentStatus, it.Guard, it.NodeStatus = or(r.AgentStatus, it.AgentStatus), or(r.Guard, it.Guard), r.NodeStatus
				it.Summary = firstLine(or(r.Summary, r.Error))
				if it.StartedAt != nil {
					it.DurationMS = at.Sub(*it.StartedAt).Milliseconds()
				}
			}
			if r.Usage != nil {
				if it.Usage == nil {
					it.Usage = &state.Usage{}
				}
				it.Usage.Add(*r.Usage)
			}
		}
	}
	return out
}

// readJournalTail decodes the complete lines of the end of a journal,
// only those keep is true of when keep is not nil.
func readJournalTail(path string, keep func(line []byte) bool) []state.Record {
	out, _ := state.ReadJournalTail(path, journalWindow, keep)
	return out
}

// journalRecords are the journal's records of iteration n. Only the
// lines that name n are decoded.
func journalRecords(p state.Paths, n int) []state.Record {
	key := []byte(`"iteration":` + strconv.Itoa(n))
	mentions := func(line []byte) bool {
		for i := 0; ; {
			j := bytes.Index(line[i:], key)
			if j < 0 {
				return false
			}
			i += j + len(key)
			if i == len(line) || line[i] < '0' || line[i] > '9' {
				return true
			}
		}
	}
	out := []state.Record{}
	for _, path := range []string{p.OldJournal(), p.Journal()} {
		for _, r := range readJournalTail(path, mentions) {
			if r.Iteration == n {
				out = append(out, r)
			}
		}
	}
	return out
}

// firstLine is the first line of s, cut to maxSummary bytes.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > maxSummary {
		cut := maxSummary
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return inert.Line(s)
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

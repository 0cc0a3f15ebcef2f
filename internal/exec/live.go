package executor

import (
	"bytes"
	"errors"
	"sync"

	"github.com/go-json-experiment/json"

	"github.com/runner-cli/runner/internal/spend"
	"github.com/runner-cli/runner/internal/state"
)

// The usage of an agent at work (SPEC §24): Claude puts the usage of each
// model response on the assistant events of its stream-json output (a
// response whose content has several blocks comes as several events of
// the same message id, each with the same usage); Codex sums usage in
// --json only at the end (turn.completed), but writes a token_count
// event with the thread's running total to its session log after each
// model response (session.go). The runner prices it as it comes
// (executor.price) and checks it against the run's Allowance, which
// stops the agent at the first cap reached.

// liveUsage is what an agent run reported of its usage so far.
type liveUsage struct {
	prices    state.Prices
	allowance *spend.Allowance
	// stop ends the agent's run, once, at a cap reached.
	stop func(*state.CapHit)

	mu sync.Mutex
	// Claude: the messages done (done), and the one whose events are
	// coming (curID, cur).
	done, cur state.Usage
	curID     string
	// Codex: the session logs' highest running total.
	codex state.Usage
	seen  bool
	hit   *state.CapHit
}

// newLiveUsage reads the usage of a run of preset with options o as it
// comes; nil when the preset reports none while it works (command) and
// nothing would read it.
func newLiveUsage(o Options, stop func(*state.CapHit)) *liveUsage {
	if o.Preset != PresetCodex && o.Preset != PresetClaude {
		return nil
	}
	return &liveUsage{prices: o.Prices, allowance: o.Allowance, stop: stop}
}

// claudeAssistant reads the usage of a Claude assistant event, line.
func (l *liveUsage) claudeAssistant(line []byte) {
	if l == nil || !bytes.Contains(line, []byte(`"usage"`)) || !bytes.Contains(line, []byte(`"assistant"`)) {
		return
	}
	var ev struct {
		Type    string `json:"type"`
		Message struct {
			ID    string       `json:"id"`
			Usage *claudeUsage `json:"usage"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &ev, lenient...) != nil || ev.Type != "assistant" || ev.Message.Usage == nil {
		return
	}
	cu := ev.Message.Usage
	u := state.Usage{InputTokens: cu.InputTokens + cu.CacheCreationInputTokens + cu.CacheReadInputTokens,
		CachedInputTokens: cu.CacheReadInputTokens, OutputTokens: cu.OutputTokens}
	l.mu.Lock()
	if ev.Message.ID == "" || ev.Message.ID != l.curID {
		l.done.Add(l.cur)
		l.curID, l.cur = ev.Message.ID, state.Usage{}
	}
	// The message's usage as its latest report gives it; a lower one
	// than an earlier report of the same message was not Claude's (a
	// command of the agent's can write to the CLI's output through
	// /proc): a usage only ever rises.
	l.cur = maxUsage(l.cur, u)
	l.seen = true
	l.mu.Unlock()
	l.check()
}

// codexTotal takes the running total of a Codex token_count event.
func (l *liveUsage) codexTotal(u state.Usage) {
	l.mu.Lock()
	// A running total only rises: a lower one was not codex's (the
	// agent's commands can write its session log).
	l.codex = maxUsage(l.codex, u)
	l.seen = true
	l.mu.Unlock()
	l.check()
}

// usage returns what the run reported so far, priced; false when it
// reported nothing.
func (l *liveUsage) usage() (state.Usage, bool) {
	if l == nil {
		return state.Usage{}, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	u := l.done
	u.Add(l.cur)
	u.Add(l.codex)
	if l.prices.IsSet() {
		u.CostUSD, u.CostSource = l.prices.Cost(u), state.CostComputed
	}
	return u, l.seen
}

// check hands the usage so far to the allowance and stops the run at the
// first cap reached.
func (l *liveUsage) check() {
	if !l.allowance.Capped() {
		return
	}
	u, _ := l.usage()
	h := l.allowance.Check(u)
	if h == nil {
		return
	}
	l.mu.Lock()
	first := l.hit == nil
	if first {
		l.hit = h
	}
	l.mu.Unlock()
	if first {
		l.stop(h)
	}
}

// capHit is the cap that stopped the run, nil when none did.
func (l *liveUsage) capHit() *state.CapHit {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.hit
}

// errCostCap is the cause an agent's run is stopped with at a spend cap.
var errCostCap = errors.New("a spend cap was reached")

// concludeSpend completes res with the usage the agent reported while it
// worked, when it reported none at its end (it was stopped, or its CLI
// sums usage only then), and, when stopped is set (the runner stopped
// the agent, not a signal to the runner) and a cap did it, classes it
// cost_cap.
//
// A usage reported at the end that is lower than what was reported
// while the agent worked is raised to it: the agent's commands can write
// to its CLI's output (through /proc) and forge a lower end, not unwrite
// what was read before.
func concludeSpend(res *Result, live *liveUsage, stopped bool) {
	if u, seen := live.usage(); seen && res.Usage == nil {
		res.Usage = &u
	} else if seen {
		end := *res.Usage
		raised := maxUsage(end, u)
		raised.CostUSD, raised.CostSource = end.CostUSD, end.CostSource
		if u.CostUSD > end.CostUSD {
			raised.CostUSD, raised.CostSource = u.CostUSD, u.CostSource
		}
		res.Usage = &raised
	}
	h := live.capHit()
	if h == nil || !stopped {
		return
	}
	res.Class, res.CostCap, res.AgentFailed, res.ResetAt = ClassCostCap, h, false, nil
	res.Error = "the runner stopped the agent: " + h.String()
	res.Evidence = ""
	if res.Message == nil && res.Verdict == nil {
		res.MessageError = "no final message: " + res.Error
	}
}

// maxUsage is the larger of a and b, token count by token count.
func maxUsage(a, b state.Usage) state.Usage {
	return state.Usage{InputTokens: max(a.InputTokens, b.InputTokens),
		CachedInputTokens: max(a.CachedInputTokens, b.CachedInputTokens), OutputTokens: max(a.OutputTokens, b.OutputTokens)}
}

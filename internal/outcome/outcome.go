// Package outcome is the table of SPEC §6 as pure functions over values:
// what the agent's message and the guards' verdict make of an iteration,
// whether it spends one of the task's attempts, and what that does to the
// fields the runner owns on a node (status, attempts, blocked_reason),
// exhaustion included. Nothing here reads or writes a file; the loop
// applies the result and the ledger records it.
package outcome

import (
	"fmt"
	"strings"

	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/textfmt"
	"github.com/runner-cli/runner/internal/tree"
)

// ReasonExhausted is the blocked_reason of a leaf whose attempts are used
// up.
const ReasonExhausted = "attempts exhausted"

// Values of run_state.last_status beyond the agent's own statuses.
const (
	LastStatusError       = "error"
	LastStatusInterrupted = "interrupted"
)

// Iteration is what an iteration produced, as far as its outcome goes.
type Iteration struct {
	// AgentOK is set when the agent's run was classed ok; AgentStatus is
	// the status of its final message ("" when there is none).
	AgentOK     bool
	AgentStatus string
	// Guard is the guards' verdict: state.GuardPass, GuardFail or
	// GuardSkipped.
	Guard string
	// Interrupted is set when the iteration did not get to finish while
	// its agent worked (a signal, a runner killed).
	Interrupted bool
	// Review is the reviewer's verdict on a done whose guards passed
	// (state.Verdict*), "" when there was no review.
	Review string
	// Tampered is set when the agent changed what judges it (its
	// config, tree, the runner's state or a verify.protect path): the
	// attempt fails as a guard failure, whatever the agent said.
	Tampered bool
	// Conflicted is set when a task finished in a parallel slot could not
	// be brought onto the run branch (a conflict, or guards failing on the
	// result): the attempt fails as a guard failure.
	Conflicted bool
	// CostCapped is set when the runner stopped the agent (or the
	// reviewer) at a spend cap (SPEC §24): whatever it said, the attempt
	// ends there, charged, its work kept as an interrupted attempt's.
	CostCapped bool
}

// Of returns the outcome of an iteration (state.Outcome*): an agent that
// did not run cleanly or gave no usable status is an executor error;
// "done" is done only when the guards did not fail.
func Of(it Iteration) string {
	switch {
	case it.Interrupted:
		return state.OutcomeInterrupted
	case it.Tampered:
		return state.OutcomeGuardFailed
	case it.CostCapped:
		return state.OutcomeCostCap
	case !it.AgentOK || it.AgentStatus == "":
		return state.OutcomeExecutorError
	}
	switch it.AgentStatus {
	case "done":
		if it.Guard == state.GuardFail || it.Conflicted {
			return state.OutcomeGuardFailed
		}
		if it.Review == state.VerdictReject {
			return state.OutcomeRejected
		}
		return state.OutcomeDone
	case "retry":
		return state.OutcomeRetry
	case "blocked":
		return state.OutcomeBlocked
	case "decomposed":
		return state.OutcomeDecomposed
	}
	return state.OutcomeExecutorError
}

// CountsAsAttempt reports whether an outcome spends one of the task's
// attempts: every failure does (a rejection as a failing guard); done,
// blocked (a question for a person) and decomposed (the task became
// others) do not.
func CountsAsAttempt(outcome string) bool {
	switch outcome {
	case state.OutcomeGuardFailed, state.OutcomeRetry, state.OutcomeExecutorError, state.OutcomeInterrupted, state.OutcomeRejected,
		state.OutcomeCostCap:
		return true
	}
	return false
}

// Fields are the fields of a node the runner owns.
type Fields struct {
	Status        tree.Status // "" is open
	Attempts      int
	BlockedReason string
}

// FieldsOf returns n's runner-owned fields.
func FieldsOf(n *tree.Node) Fields {
	return Fields{Status: n.Status, Attempts: n.Attempts, BlockedReason: n.BlockedReason}
}

// Set gives n the fields.
func (f Fields) Set(n *tree.Node) {
	n.Status, n.Attempts, n.BlockedReason = f.Status, f.Attempts, f.BlockedReason
}

// Apply returns a node's fields after an iteration that was its attempt
// number attempt (1-based) ended with outcome, the node allowing limit
// attempts. Attempts are written as the absolute attempt number, so that
// applying the same iteration twice (after a crash while it was being
// recorded) gives the same fields. A blocked outcome records why (reason:
// its BlockedReason, the agent's questions or summary); used-up attempts
// block the node with ReasonExhausted.
func Apply(f Fields, outcome string, attempt, limit int, reason string) Fields {
	switch outcome {
	case state.OutcomeDone:
		f.Status, f.BlockedReason = tree.StatusDone, ""
	case state.OutcomeBlocked:
		f.Status, f.BlockedReason = tree.StatusBlocked, textfmt.OneLine(reason, 500)
	}
	if CountsAsAttempt(outcome) {
		f.Attempts = attempt
		if f.Attempts >= limit {
			f.Status, f.BlockedReason = tree.StatusBlocked, ReasonExhausted
		}
	}
	return f
}

// BlockedReason is the blocked_reason of a task its agent blocked: the
// questions it asked a person, on one line, or its summary when it asked
// none. A person answers the question (`runner answer`), so the question
// is what status, the report and the dashboard show.
func BlockedReason(summary string, questions []string) string {
	var b strings.Builder
	for _, q := range questions {
		q = textfmt.OneLine(q, 500)
		if q == "" {
			continue
		}
		if b.Len() > 0 {
			if s := b.String(); strings.HasSuffix(s, "?") || strings.HasSuffix(s, ".") {
				b.WriteString(" ")
			} else {
				b.WriteString("; ")
			}
		}
		b.WriteString(q)
	}
	if b.Len() == 0 {
		return textfmt.OneLine(summary, 500)
	}
	return textfmt.OneLine(b.String(), 500)
}

// Rejected returns a node's fields, as Apply left them after a
// rejection, once the reviewer's rejection number rejection is counted:
// at maxRejections the task is blocked with the reviewer's reasons, for
// a person to answer (before exhausted attempts, which say less).
func Rejected(f Fields, rejection, maxRejections int, reasons []string) Fields {
	if rejection < maxRejections || f.Status == tree.StatusDone {
		return f
	}
	why := "the reviewer rejected it"
	if rejection > 1 {
		why = fmt.Sprintf("the reviewer rejected it %d times", rejection)
	}
	if len(reasons) > 0 {
		why += ": " + strings.Join(reasons, "; ")
	}
	f.Status, f.BlockedReason = tree.StatusBlocked, textfmt.OneLine(why, 500)
	return f
}

// Settle brings a leaf's fields in line with its attempt limit, which a
// person may have changed: an open leaf whose attempts are used up
// becomes blocked, and one blocked only because they were used up opens
// again once the limit is above them. changed is false when nothing
// moved.
func Settle(f Fields, limit int) (_ Fields, changed bool) {
	open := f.Status == "" || f.Status == tree.StatusOpen
	switch {
	case open && f.Attempts >= limit:
		f.Status, f.BlockedReason = tree.StatusBlocked, ReasonExhausted
		return f, true
	case f.Status == tree.StatusBlocked && f.BlockedReason == ReasonExhausted && f.Attempts < limit:
		f.Status, f.BlockedReason = "", ""
		return f, true
	}
	return f, false
}

// LastStatus is run_state.last_status after an iteration with outcome:
// the agent's own status, or "error" after an executor error, or
// "interrupted".
func LastStatus(outcome, agentStatus string) string {
	switch outcome {
	case state.OutcomeExecutorError:
		return LastStatusError
	case state.OutcomeInterrupted, state.OutcomeCostCap:
		// Stopped at a spend cap, the attempt is an interrupted one: the
		// next is told its work may be partial.
		return LastStatusInterrupted
	}
	return agentStatus
}

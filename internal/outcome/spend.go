package outcome

import (
	"strings"

	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/textfmt"
	"github.com/runner-cli/runner/internal/tree"
)

// ReasonCostCap starts the blocked_reason of a task over one of its
// spend caps (SPEC §24): "cost cap: the task's cap (…) was reached: …".
const ReasonCostCap = "cost cap"

// CostCapReason is the blocked_reason of a task over its cap h.
func CostCapReason(h *state.CapHit) string {
	return textfmt.OneLine(ReasonCostCap+": "+h.String(), 500)
}

// IsCostCap reports whether a blocked reason is a spend cap's.
func IsCostCap(reason string) bool { return strings.HasPrefix(reason, ReasonCostCap) }

// OverCap returns a task's fields once its spend is counted: a task not
// done that reached one of its caps (over, nil when none) is blocked
// with the cap as its reason, whatever the iteration made of it (an
// agent's own blocked stands, with its question). A done or decomposed
// task, or one blocked for another reason, is left as it is.
func OverCap(f Fields, over *state.CapHit) Fields {
	if over == nil || f.Status == tree.StatusDone || f.Status == tree.StatusBlocked && !IsCostCap(f.BlockedReason) && f.BlockedReason != ReasonExhausted {
		return f
	}
	f.Status, f.BlockedReason = tree.StatusBlocked, CostCapReason(over)
	return f
}

// SettleCap brings a leaf's fields in line with its spend caps, which a
// person may have changed: an open leaf over one (over) is blocked, and
// one blocked only for its caps opens again once they are raised above
// its spend (over nil). changed is false when nothing moved.
func SettleCap(f Fields, over *state.CapHit) (_ Fields, changed bool) {
	open := f.Status == "" || f.Status == tree.StatusOpen
	switch {
	case open && over != nil:
		f.Status, f.BlockedReason = tree.StatusBlocked, CostCapReason(over)
		return f, true
	case f.Status == tree.StatusBlocked && IsCostCap(f.BlockedReason) && over == nil:
		f.Status, f.BlockedReason = "", ""
		return f, true
	}
	return f, false
}

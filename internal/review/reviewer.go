package review

import (
	"time"

	"github.com/charmbracelet/log"

	"github.com/runner-cli/runner/internal/config"
	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/lane"
	"github.com/runner-cli/runner/internal/runbranch"
	"github.com/runner-cli/runner/internal/scrub"
	"github.com/runner-cli/runner/internal/spend"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// Review is one iteration's review, and what it needs of the run.
type Review struct {
	// Config is the config in force, read under the run's lock.
	Config func() *config.Config
	Paths  state.Paths
	// Here is where the work is held and the reviewer runs: the lane's
	// working tree on this machine.
	Here   *lane.Local
	Branch *runbranch.Branch
	Ledger Ledger
	Log    *log.Logger
	// Options are the options of an executor (the reviewer's).
	Options func(config.Executor) executor.Options
	// Scrubber redacts the secrets of the reviewer's prompt.
	Scrubber func() (*scrub.Scrubber, error)
	// Task is task id as tree.json has it now; nil when it cannot be read
	// or the task is gone.
	Task func(id string) *tree.Node
	// After is called once a run of the reviewer of iteration n ended:
	// what it left running is stopped, and what it forged of the
	// runner's files is kept under dir (named with prefix) and returned.
	After func(n int, dir, prefix string) ([]state.TamperMeta, error)
	// Clock reads the time usage limits reset against.
	Clock func() time.Time
	// Spend is what the reviewer of meta's task may spend (SPEC §24),
	// counted among the agents at work until end, called once its usage
	// is booked; nil: no caps.
	Spend func(meta *state.Meta) (a *spend.Allowance, end func())
}

// Ledger is what the review records (package ledger): the reviewer's
// process, its failures, the verdict, and the rejections before it.
type Ledger interface {
	ReviewStarted(n, pgid int)
	ReviewFailed(meta *state.Meta, rec state.Record) error
	Reviewed(meta *state.Meta) error
	Rejections(node string, covers func(id string) bool, skip int) (int, error)
}

package status

import (
	"context"
	"time"

	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/state"
)

// baseAhead is how many commits the base has that the run branch has
// not (SPEC §23: "main is 3 commits ahead of runner/app"); 0 when git
// cannot say.
func baseAhead(p state.Paths, branch, base string, timeout time.Duration) int {
	if timeout <= 0 || timeout > branchHeadTimeout {
		timeout = branchHeadTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	repo, err := git.Open(ctx, p.Root, git.Options{Timeout: timeout})
	if err != nil {
		return 0
	}
	n, err := repo.CountAhead(ctx, git.BranchRef(branch), git.BranchRef(base))
	if err != nil {
		return 0
	}
	return n
}

package ledger

import (
	"slices"
	"strconv"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/state"
)

// pruneRuns applies loop.keep_runs once iteration last is recorded: the
// oldest run folders beyond keep_runs are removed. The folder of last is
// always kept (the next iteration's failure.md reads its failure.log), and
// no other iteration is in flight at that point. runs/ is listed once per
// run of the loop; after that the folders are tracked as they are
// created, so pruning costs one removal per iteration.
//
// Removal is not made durable: a folder that reappears after a machine
// crash is removed again next time. A failure to remove is logged and
// the run goes on.
func (l *Ledger) pruneRuns(last int) {
	keep := l.keepRuns
	if keep <= 0 {
		l.runs = nil
		return
	}
	if l.runs == nil {
		runs, err := listRuns(l.p)
		if err != nil {
			l.log.Warn("loop.keep_runs: cannot list the run folders; nothing pruned", "err", err)
			return
		}
		l.runs = runs
	} else if n := len(l.runs); n == 0 || l.runs[n-1] < last {
		l.runs = append(l.runs, last)
	}
	for len(l.runs) > keep {
		n := l.runs[0]
		if n >= last {
			break
		}
		dir := l.p.RunDir(n)
		if err := fsutil.RemoveAll(dir); err != nil {
			l.log.Warn("loop.keep_runs: cannot remove an old run folder", "folder", l.p.Rel(dir), "err", err)
			return
		}
		l.runs = l.runs[1:]
	}
	if l.keep != nil && len(l.runs) > 0 {
		l.keep.Prune(l.runs[0])
	}
}

// listRuns returns the numbers of the run folders in runs/, in order.
func listRuns(p state.Paths) ([]int, error) {
	entries, err := fsutil.ReadDir(p.RunsDir())
	if err != nil {
		return nil, err
	}
	runs := make([]int, 0, len(entries))
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil || n < 1 || !e.IsDir() || state.RunName(n) != e.Name() {
			continue
		}
		runs = append(runs, n)
	}
	slices.Sort(runs)
	return runs, nil
}

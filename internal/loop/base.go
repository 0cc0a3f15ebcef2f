package loop

import (
	"context"
	"fmt"

	"github.com/runner-cli/runner/internal/lane"
	"github.com/runner-cli/runner/internal/preflight"
	"github.com/runner-cli/runner/internal/runbranch"
	"github.com/runner-cli/runner/internal/sandbox"
	"github.com/runner-cli/runner/internal/scrub"
	"github.com/runner-cli/runner/internal/state"
)

// The run branch follows its base (SPEC §23, package runbranch): at each
// boundary, before the preflight, a run branch with no task of its own
// starts from the base's tip; after it, the base is merged into one with
// work, the guards judging the result as they judge a task's (package
// preflight). Each is journaled.

// withBase follows the base and runs the preflight, before task node
// starts (node "": with slots): the run branch moved to the base's tip
// first, the preflight on where the run starts, then the base merged in,
// judged against the preflight's baseline.
func (r *Runner) withBase(ctx context.Context, node string) error {
	if err := r.startFromBase(ctx, node); err != nil {
		return err
	}
	if err := r.preflight(ctx); err != nil {
		return err
	}
	return r.mergeBase(ctx, node)
}

// startFromBase brings a run branch with no work of its own to its
// base's tip before task node starts (node "": with slots).
func (r *Runner) startFromBase(ctx context.Context, node string) error {
	first := !r.cache.baseLooked
	r.cache.baseLooked = true
	f, err := r.env.Branch.StartFromBase(ctx, r.cfg, first, node, r.ledger.State().LastNode, r.env.Lock.Outside)
	return r.journalFollowed(f, err)
}

// mergeBase merges the base into a run branch with work of its own
// before task node starts (node "": with slots), the guards on the
// result in the run branch's working tree.
func (r *Runner) mergeBase(ctx context.Context, node string) error {
	guards := func(ctx context.Context, work, logs, head, merge string) (bool, error) {
		return r.baselines.Judge(ctx, r.cfg, preflight.Result{Dir: work, Logs: logs, Parent: head, Commit: merge, From: "the base merged in"},
			preflight.Env{
				Room:          func() (*sandbox.Room, string, error) { return r.env.Rooms.Room(r.cfg, 0, work) },
				Cleanup:       func() { r.env.Rooms.RemoveTempDir(0) },
				KillLeftovers: func() { lane.KillPreflightLeftovers(r.p, r.cfg.Executor.KillGrace.Duration, r.log) },
				Scrubber:      func() (*scrub.Scrubber, error) { return r.scrubberFor(r.cfg) },
			})
	}
	f, err := r.env.Branch.MergeBase(ctx, r.cfg, node, r.ledger.State().LastNode, guards, r.env.Lock.Outside)
	return r.journalFollowed(f, err)
}

// journalFollowed journals what following the base did.
func (r *Runner) journalFollowed(f *runbranch.Followed, err error) error {
	if err != nil || f == nil || f.Kind == "" {
		return err
	}
	what := map[string]string{
		runbranch.FollowedFastForward: "started from %s's tip %s (%s ahead)",
		runbranch.FollowedMerge:       "merged %s (at %s, %s ahead) into the run branch",
		runbranch.FollowedConflict:    "could not take in %s (at %s, %s ahead): not followed until it moves",
		runbranch.FollowedGuards:      "the guards failed on %s (at %s, %s ahead) merged in: not followed until it moves",
		runbranch.FollowedBehind:      "%s (at %s) is %s ahead; git.follow_base = false",
	}[f.Kind]
	ahead := fmt.Sprintf("%d commits", f.Ahead)
	if f.Ahead == 1 {
		ahead = "1 commit"
	}
	return r.ledger.Journal(state.Record{Event: state.EventBase, Outcome: f.Kind, Paths: f.Files,
		Summary: fmt.Sprintf(what, f.Base, runbranch.Short(f.Tip), ahead)})
}

// pruneRefs prunes the refs kept under refs/runner/ past git.keep_refs
// (runbranch.PruneRefs), but those of the iterations still in flight,
// says so and journals them.
func (r *Runner) pruneRefs(ctx context.Context) error {
	var busy []int
	for _, f := range r.ledger.State().Flights() {
		busy = append(busy, f.Iteration)
	}
	pruned, err := r.env.Branch.PruneRefs(ctx, r.cfg, busy)
	if err != nil {
		// Kept refs are only bounded: the run goes on, and the next one
		// prunes them.
		r.log.Warn("could not prune the refs under refs/runner/", "err", err)
		return nil
	}
	return r.journalPruned(pruned)
}

// journalPruned says how many refs were pruned and journals them.
func (r *Runner) journalPruned(pruned runbranch.Pruned) error {
	if len(pruned.Refs) == 0 {
		return nil
	}
	k := r.cfg.Git.KeepRefs
	fmt.Fprintf(r.opts.Notices, "runner: pruned %d refs under refs/runner/ past git.keep_refs (count %d, age %s): the journal names them\n",
		len(pruned.Refs), k.Count, k.Age.Duration)
	return r.ledger.Journal(state.Record{Event: state.EventRefsPruned, Paths: firstN(pruned.Refs, maxPrunedNamed),
		Summary: fmt.Sprintf("%d refs past git.keep_refs (count %d, age %s)", len(pruned.Refs), k.Count, k.Age.Duration)})
}

// maxPrunedNamed bounds the refs a refs_pruned record names.
const maxPrunedNamed = 200

// firstN is the first n of s.
func firstN(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

package runbranch

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/git"
)

// Kept refs are bounded (SPEC §23): what the runner keeps under
// refs/runner/ (failed attempts, what the judges left, a person's files
// that were in the way, commits found on the run branch that it did not
// make, work under review) is pruned by git.keep_refs, each kind (the
// folder under refs/runner/) on its own: beyond its newest Count, or
// older than Age (by the kept commit's date). Never pruned: the engine's
// exchange with its workers (refs/runner/engine/, which the engine
// cleans), a mark of the runner's own at the top of refs/runner/
// (following), and a ref that names an iteration under way.

// runnerRefs is where the runner keeps its refs.
const runnerRefs = "refs/runner/"

// unpruned are the kinds git.keep_refs does not bound.
var unpruned = []string{"engine"}

// Pruned is what PruneRefs deleted.
type Pruned struct {
	Refs []string // their names, oldest kind first, newest first within one
}

// PruneRefs deletes, in repo, the refs under refs/runner/ past keep at
// now, but those naming an iteration of busy. A ref moved meanwhile is
// left. It returns what it deleted.
func PruneRefs(ctx context.Context, repo *git.Repo, keep config.KeepRefs, now time.Time, busy []int) (Pruned, error) {
	if keep.Count <= 0 && keep.Age.Duration <= 0 {
		return Pruned{}, nil
	}
	refs, err := repo.ListRefs(ctx, runnerRefs)
	if err != nil {
		return Pruned{}, fmt.Errorf("list the refs under %s: %w", runnerRefs, err)
	}
	doomed := pastKeep(refs, keep, now, busy)
	moved, err := repo.DeleteRefs(ctx, doomed)
	if err != nil {
		return Pruned{}, fmt.Errorf("prune the refs under %s: %w", runnerRefs, err)
	}
	var p Pruned
	for _, r := range doomed {
		if !slices.ContainsFunc(moved, func(m git.Ref) bool { return m.Name == r.Name }) {
			p.Refs = append(p.Refs, r.Name)
		}
	}
	return p, nil
}

// pastKeep are the refs of refs past keep at now, by kind, the newest
// of each kind first, but those naming an iteration of busy.
func pastKeep(refs []git.Ref, keep config.KeepRefs, now time.Time, busy []int) []git.Ref {
	kinds := map[string][]git.Ref{}
	var order []string
	for _, r := range refs {
		kind, name, ok := strings.Cut(strings.TrimPrefix(r.Name, runnerRefs), "/")
		if !ok || slices.Contains(unpruned, kind) || namesIteration(name, busy) {
			continue
		}
		if _, seen := kinds[kind]; !seen {
			order = append(order, kind)
		}
		kinds[kind] = append(kinds[kind], r)
	}
	slices.Sort(order)
	var doomed []git.Ref
	for _, kind := range order {
		rs := kinds[kind]
		slices.SortStableFunc(rs, newerFirst)
		for i, r := range rs {
			tooMany := keep.Count > 0 && i >= keep.Count
			tooOld := keep.Age.Duration > 0 && !r.Time.IsZero() && now.Sub(r.Time) > keep.Age.Duration
			if tooMany || tooOld {
				doomed = append(doomed, r)
			}
		}
	}
	return doomed
}

// newerFirst orders refs by their commit's date, the newest first; refs
// of the same second by the number their names end with (an
// iteration's), the highest first, then by name.
func newerFirst(a, b git.Ref) int {
	if c := b.Time.Compare(a.Time); c != 0 {
		return c
	}
	na, ea := strconv.Atoi(a.Name[strings.LastIndexAny(a.Name, "/-")+1:])
	nb, eb := strconv.Atoi(b.Name[strings.LastIndexAny(b.Name, "/-")+1:])
	if ea == nil && eb == nil && na != nb {
		return nb - na
	}
	return strings.Compare(a.Name, b.Name)
}

// namesIteration reports whether a ref's name under its kind (12,
// guards-12, 12-1700000000) names one of the iterations its.
func namesIteration(name string, its []int) bool {
	if len(its) == 0 {
		return false
	}
	for _, part := range strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '/' }) {
		if n, err := strconv.Atoi(part); err == nil && slices.Contains(its, n) {
			return true
		}
	}
	return false
}

// PruneRefs prunes the refs under refs/runner/ past git.keep_refs (the
// package's PruneRefs), but those of the iterations busy; nothing
// without git checkpoints.
func (b *Branch) PruneRefs(ctx context.Context, cfg *config.Config, busy []int) (Pruned, error) {
	if b.Main() == nil {
		return Pruned{}, nil
	}
	return PruneRefs(ctx, b.main.repo, cfg.Git.KeepRefs, time.Now(), busy)
}

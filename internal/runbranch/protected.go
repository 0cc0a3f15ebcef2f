package runbranch

import (
	"context"
	"fmt"
	"strings"

	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/verify"
)

// ProtectedSince compares the verify.protect paths (protect) of the
// working tree with its checkpoint, for iteration n, which a runner
// that died left while its agent could act (SPEC §20): the check made when
// the agent exited never ran. The comparison is git's (a snapshot's tree
// against the checkpoint's, hashed by streaming, never read whole). What
// changed is kept, with the rest of the working tree, as a commit under
// refs/runner/kept/tamper-<n>, put back as the checkpoint has it, and
// returned as tamper; nil without git checkpoints or protected paths.
func (ck *Tree) ProtectedSince(ctx context.Context, protect []string, n int) ([]state.TamperMeta, error) {
	globs, _ := verify.ParseGlobs(protect) // checked when the config loaded
	if ck == nil || ck.head == "" || len(globs) == 0 {
		return nil, nil
	}
	snap, err := ck.repo.Snapshot(ctx, ck.head, ck.runtime)
	if err != nil {
		return nil, fmt.Errorf("compare the protected paths with the checkpoint %s: %w", Short(ck.head), err)
	}
	var changed []string
	for _, p := range snap.Paths {
		if globs.Match(p) {
			changed = append(changed, p)
		}
	}
	if len(changed) == 0 {
		return nil, nil
	}
	name := fmt.Sprintf("tamper-%d", n)
	m := git.Message{Subject: fmt.Sprintf("iteration %d's working tree, with protected paths changed", n),
		Body: "Found by a runner resuming the iteration after its runner stopped: " + strings.Join(changed, ", ")}
	if _, err := ck.repo.Keep(ctx, name, snap.Tree, ck.head, m); err != nil {
		return nil, fmt.Errorf("keep the working tree of iteration %d: %w", n, err)
	}
	if err := ck.repo.RestorePaths(ctx, ck.head, changed); err != nil {
		return nil, err
	}
	base, err := ck.repo.TreeFiles(ctx, ck.head, changed)
	if err != nil {
		return nil, err
	}
	tamper := make([]state.TamperMeta, 0, len(changed))
	for _, p := range changed {
		kind := verify.Modified
		if !base[p] {
			kind = verify.Added
		} else if !snapHas(ctx, ck.repo, snap.Tree, p) {
			kind = verify.Deleted
		}
		tamper = append(tamper, state.TamperMeta{Path: p, Change: kind, Kept: git.KeptPrefix + name})
	}
	ck.b.log.Warn("protected paths changed while the previous runner was stopped mid-iteration: kept and put back, and the attempt fails",
		"iteration", n, "paths", strings.Join(changed, ", "), "kept", git.KeptPrefix+name)
	fmt.Fprintf(ck.b.notices, "runner: iteration %d, left by a runner that stopped, changed protected paths %s: put back as the checkpoint %s has them, kept under %s\n",
		n, inert.Line(strings.Join(changed, ", ")), Short(ck.head), git.KeptPrefix+name)
	return tamper, nil
}

// snapHas reports whether tree holds a file at p.
func snapHas(ctx context.Context, repo *git.Repo, tree, p string) bool {
	files, err := repo.TreeFiles(ctx, tree, []string{p})
	return err == nil && files[p]
}

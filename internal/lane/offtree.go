package lane

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/log"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/iteration"
	"github.com/runner-cli/runner/internal/offtree"
	"github.com/runner-cli/runner/internal/runbranch"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/textfmt"
)

// The guards judge what lands (SPEC §18, §20): what the lane's working
// tree holds outside the judged tree (ignored files, repositories of
// their own) and that was made or changed since the work on the task
// started is hidden from them (package offtree), and put back after
// them. Ignored files that were there before (dependencies, caches) stay
// usable. When the work on a task started is marked (marker.go).

// Files of the lane's git folder: the marker, and where what is hidden
// waits for the guards to end.
const (
	workSinceFile = "runner-work-since"
	hiddenDir     = "runner-hidden"
)

// offtreeGuard names the failed result of files outside the judged tree
// that could not be hidden from the guards.
const offtreeGuard = "judged tree"

// hideOffTree hides from meta's guards what the lane's working tree holds
// outside the judged tree and was made or changed since the work on its
// task started. It returns what it could not hide (the guards must fail
// on it). Without git checkpoints, or without a marker for the task (an
// iteration begun by an older runner), nothing is hidden.
func (l *Local) hideOffTree(ctx context.Context, meta *state.Meta) (offtree.Result, error) {
	var res offtree.Result
	if l.tree == nil {
		return res, nil
	}
	since, ok := l.workSince(meta.Node)
	if !ok {
		l.env.Log.Info("no mark of when the work on the task started: nothing is hidden from its guards", "iteration", meta.Iteration, "node", meta.Node)
		return res, nil
	}
	repo := l.tree.Repo()
	roots, err := repo.Outside(ctx, l.tree.Runtime())
	if err != nil {
		return res, fmt.Errorf("find what is outside the judged tree of iteration %d: %w", meta.Iteration, err)
	}
	l.env.Lock.Outside(func() {
		res, err = offtree.Hide(repo.Top(), roots, since, filepath.Join(repo.GitDir(), hiddenDir))
	})
	if err != nil {
		return res, fmt.Errorf("iteration %d: %w", meta.Iteration, err)
	}
	if len(res.Moved) > 0 {
		meta.Hidden = res.Moved[:min(len(res.Moved), state.MaxRegressedNames)]
		meta.HiddenMore = len(res.Moved) - len(meta.Hidden)
		l.env.Log.Info("hid from the guards what the work made outside the judged tree (it does not land)", "iteration", meta.Iteration,
			"node", meta.Node, "paths", inert.Line(textfmt.Head(res.Moved, 5)))
	}
	return res, nil
}

// restoreOffTree puts back what hideOffTree hid, once the guards ended.
// What the guards made again at the same path stays, theirs.
func (l *Local) restoreOffTree(meta *state.Meta) error {
	if l.tree == nil {
		return nil
	}
	var dropped []string
	var err error
	repo := l.tree.Repo()
	l.env.Lock.Outside(func() {
		dropped, err = offtree.Restore(repo.Top(), filepath.Join(repo.GitDir(), hiddenDir))
	})
	if len(dropped) > 0 {
		l.env.Log.Info("the guards made again what was hidden from them; theirs stays", "iteration", meta.Iteration, "paths", inert.Line(textfmt.Head(dropped, 5)))
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("iteration %d: %w", meta.Iteration, err)
	}
	return nil
}

// RestoreLeftHidden puts back what a runner that died while its guards
// ran left hidden in t's working tree (the next guard run there would
// too, first).
func RestoreLeftHidden(t *runbranch.Tree, log *log.Logger) {
	dropped, err := offtree.Restore(t.Repo().Top(), filepath.Join(t.Repo().GitDir(), hiddenDir))
	if err != nil || len(dropped) > 0 {
		log.Warn("put back what a runner that stopped left hidden from its guards", "dropped", inert.Line(textfmt.Head(dropped, 5)), "err", err)
	}
}

// judgeOffTree notes, in the judgement j of meta's guards, what was
// hidden from them and what could not be: what could not fails the
// attempt by name; what was hidden is named at the top of failure.log
// (in logDir) when the guards failed, since it may be why.
func (l *Local) judgeOffTree(meta *state.Meta, hid offtree.Result, j *iteration.Judgement, logDir string) error {
	if len(hid.Stuck) > 0 {
		j.Verdict = state.GuardFail
		j.Results = append(j.Results, state.GuardMeta{Name: offtreeGuard, ExitCode: 1, Status: state.GuardFail,
			Error: fmt.Sprintf("%d path(s) outside the judged tree (ignored, or a repository of its own) were made by this work and could not be hidden from the guards: %s",
				len(hid.Stuck), textfmt.Head(hid.Stuck, 5))})
	}
	if j.Verdict != state.GuardFail || len(hid.Moved)+len(hid.Stuck) == 0 {
		return nil
	}
	var b strings.Builder
	if len(hid.Stuck) > 0 {
		b.WriteString("These paths were made by this work outside what lands (ignored by git, or a repository of its own) and could not be hidden from the guards; the attempt fails on them. Remove them, or make them part of the work (not ignored, not a repository of their own):\n\n")
		for _, p := range hid.Stuck[:min(len(hid.Stuck), 20)] {
			b.WriteString("- " + p + "\n")
		}
		b.WriteString("\n")
	}
	if len(hid.Moved) > 0 {
		b.WriteString("The guards did not see these paths, made or changed by this work outside what lands (ignored by git, or a repository of its own): a commit would not hold them, so they cannot make the work pass. If the work needs one, make it part of the work (not ignored), or generate it in the command that needs it:\n\n")
		for _, p := range hid.Moved[:min(len(hid.Moved), 20)] {
			b.WriteString("- " + p + "\n")
		}
		if n := len(hid.Moved) - 20; n > 0 {
			fmt.Fprintf(&b, "- and %d more\n", n)
		}
		b.WriteString("\n")
	}
	log := filepath.Join(logDir, "failure.log")
	old, err := fsutil.ReadLimited(log, 64<<20, true)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return fsutil.ReplaceFile(log, append([]byte(b.String()), old...), 0o644, fsutil.NotSynced)
}

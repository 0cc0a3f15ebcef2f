package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/loop"
)

type finishOptions struct {
	PR, Merge, Keep, Abandon bool
}

func newFinishCmd(g *globals) *cobra.Command {
	opts := &finishOptions{}
	cmd := &cobra.Command{
		Use:   "finish",
		Short: "Bring a stopped run onto its base branch, or open a pull request, and clean up",
		Long: `Bring the run branch onto its base (the branch the checkout was on when the
run branch was made, or git.base), with the run stopped:

  --merge    (the default) a fast-forward when the base has not moved, else a
             merge commit on which the guards run first: refused, nothing
             changed, when they fail. Where the base is checked out (your
             checkout), it moves there as "git merge --ff-only" does: your
             uncommitted changes stay, and one the merge would overwrite
             refuses it.
  --pr       push the run branch to git.remote (default "origin") and open a
             pull request with "gh pr create" when gh is installed, the
             morning report ("runner report") as its body; without gh it
             prints where to open one.
  --abandon  neither: only the clean-up below, the run branch kept.

Then it removes the run's worktrees (the run branch's beside the checkout and
its slots'), and after a merge the run branch. A worktree holding a change no
attempt of the run's holds is never removed: finish is refused, naming the
paths, before anything is done. --keep keeps the worktrees and the branch.

"runner status" says the run is finished; the next "runner run" starts again.

EXIT STATUS
  0  finished
  1  refused (the reason is said, nothing changed), a runner running, or an
     error`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runFinish(cmd, g, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Merge, "merge", false, "merge the run branch into its base (the default)")
	cmd.Flags().BoolVar(&opts.PR, "pr", false, "push the run branch and open a pull request")
	cmd.Flags().BoolVar(&opts.Abandon, "abandon", false, "remove the run's worktrees without merging, keeping the run branch")
	cmd.Flags().BoolVar(&opts.Keep, "keep", false, "keep the run's worktrees and the run branch")
	cmd.MarkFlagsMutuallyExclusive("merge", "pr", "abandon")
	cmd.MarkFlagsMutuallyExclusive("keep", "abandon")
	return cmd
}

func runFinish(cmd *cobra.Command, g *globals, opts *finishOptions) error {
	p, err := g.paths()
	if err != nil {
		return err
	}
	g.superviseChildren() // the guards on a merge run as a run's do, in their room
	mode := loop.FinishMerge
	switch {
	case opts.PR:
		mode = loop.FinishPR
	case opts.Abandon:
		mode = loop.FinishAbandon
	}
	fin, err := loop.Finish(cmd.Context(), loop.Options{Paths: p, Log: g.logger.WithPrefix("finish"), Notices: g.streams.Err},
		loop.FinishOptions{Mode: mode, Keep: opts.Keep, Out: g.streams.Out})
	if fin == nil && err == nil {
		err = errors.New("finish: nothing was done")
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(g.streams.Out, "the run is finished (`runner status` says how)")
	return nil
}

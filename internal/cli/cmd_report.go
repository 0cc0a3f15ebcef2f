package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/report"
)

type reportOptions struct {
	JSON  bool
	Since string
}

func newReportCmd(g *globals) *cobra.Command {
	opts := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Say on one page what the last run did",
		Long: `Say on one page what a run did, for the person who was away: the tasks done
with their commits, the failed attempts and why, the tasks blocked now with
their questions and the commands to go on, the iterations interrupted, the
cost and tokens (per executor too), the time spent waiting on usage limits,
and the anomalies (protected files changed, conflicts, reviews rejected or
skipped, tasks skipped by hand). Markdown on stdout; --json for scripts.

By default it covers the night: every "runner run" that ended in the last 24
hours, and the one in progress (the last run when none did); --since run
covers the last run alone. --since covers more or less: an iteration
number (--since 40), how long ago (--since 12h), or a time (--since 22:00,
--since "2026-03-01 22:00", RFC 3339). Reads only; safe while a run is going.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(g, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print machine-readable JSON")
	cmd.Flags().StringVar(&opts.Since, "since", "", "report from this iteration number, time or duration ago, or \"run\" for the last run (default: the runs of the last 24 hours)")
	return cmd
}

func runReport(g *globals, opts *reportOptions) error {
	since, err := report.ParseSince(opts.Since, time.Now())
	if err != nil {
		return err
	}
	p, err := g.paths()
	if err != nil {
		return err
	}
	rep, err := report.Load(p, since)
	if err != nil {
		return err
	}
	if opts.JSON {
		return report.WriteJSON(g.streams.Out, rep)
	}
	return report.WriteText(g.streams.Out, rep)
}

// Package guard runs the guard commands (tests, linters) that verify an
// agent's "done" (SPEC §6). Each guard runs with `sh -c` in the repository
// root, in its own process group through package proc, with its own
// timeout. All guard output is streamed to guard.log between a header and
// a footer line per guard; the sections of failing guards are also copied
// to failure.log, which exists only when something failed.
//
// Every guard runs, even after one failed, so that the next attempt sees
// every failure at once; only cancellation stops the sequence.
//
// Like proc, the package is for Unix systems.
package guard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/proc"
	"github.com/runner-cli/runner/internal/sandbox"
	"github.com/runner-cli/runner/internal/testreport"
)

// Spec is one [[guard]] of config.toml.
type Spec = config.Guard

// Guard statuses and verdicts.
const (
	StatusPass    = "pass"
	StatusFail    = "fail"
	StatusTimeout = "timeout"

	VerdictPass = "pass"
	VerdictFail = "fail"
)

// Result is one guard's outcome, as recorded in meta.json.
type Result struct {
	Name       string `json:"name"`
	ExitCode   int    `json:"exit_code"` // -1 when killed by a signal or not started
	DurationMS int64  `json:"duration_ms"`
	Status     string `json:"status"` // pass, fail or timeout
	Error      string `json:"error,omitempty"`

	// Report is the guard's test report, read when it names one
	// (Spec.Report) and it could be read; ReportErr says why not.
	Report    *testreport.Report `json:"-"`
	ReportErr error              `json:"-"`
}

// Judge decides a guard's status from its result before its section
// goes to failure.log: it may change res.Status and res.Error (a guard
// judged by its tests against a baseline passes with failing tests that
// failed before).
type Judge func(g Spec, res *Result)

// Run runs the guards in order in root and returns their results and the
// verdict: "pass" when every guard passed (also when there are none, with
// no results: the caller decides whether that is "skipped"), else "fail".
// A guard that cannot start (sh missing, root gone) fails with the reason.
// guardLog is replaced; a stale failureLog is removed and written again
// only if a guard fails. err is set for runner-side failures (a log that
// cannot be written) and when ctx is canceled, in which case the results
// so far are returned and the remaining guards are not run. The guards
// get the runner's environment plus env ("NAME=value" entries, which win).
func Run(ctx context.Context, root string, guards []Spec, guardLog, failureLog string, grace time.Duration, env []string) (results []Result, verdict string, err error) {
	return RunJudged(ctx, root, guards, guardLog, failureLog, grace, env, nil, nil)
}

// RunJudged is Run with judge (nil: by the exit status) deciding each
// guard's status, and each guard confined to room when it is set (SPEC
// §19, package sandbox).
func RunJudged(ctx context.Context, root string, guards []Spec, guardLog, failureLog string, grace time.Duration, env []string, judge Judge, room *sandbox.Room) (results []Result, verdict string, err error) {
	if err := fsutil.Remove(failureLog); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("remove stale %s: %w", failureLog, err)
	}
	if f, err := fsutil.Create(guardLog); err != nil {
		return nil, "", fmt.Errorf("create guard log: %w", err)
	} else if err := f.Close(); err != nil {
		return nil, "", fmt.Errorf("create guard log: %w", err)
	}
	verdict = VerdictPass
	for _, g := range guards {
		if err := ctx.Err(); err != nil {
			return results, VerdictFail, fmt.Errorf("guards interrupted before %s: %w", g.Name, err)
		}
		res, start, end, err := runOne(ctx, root, g, guardLog, grace, env, room)
		if err != nil {
			return results, VerdictFail, err
		}
		if judge != nil {
			judge(g, &res)
		}
		results = append(results, res)
		if res.Status != StatusPass {
			verdict = VerdictFail
			if err := copySection(guardLog, failureLog, start, end); err != nil {
				return results, verdict, err
			}
		}
		if err := ctx.Err(); err != nil {
			return results, VerdictFail, fmt.Errorf("guard %s interrupted: %w", g.Name, err)
		}
	}
	return results, verdict, nil
}

// runOne runs one guard, appending its section to guardLog, and returns
// the result and the section's byte range in guardLog.
func runOne(ctx context.Context, root string, g Spec, guardLog string, grace time.Duration, env []string, room *sandbox.Room) (res Result, start, end int64, err error) {
	res = Result{Name: g.Name, ExitCode: -1}
	if start, err = appendText(guardLog, fmt.Sprintf("=== guard %s: %s ===\n", g.Name, g.Run)); err != nil {
		return res, 0, 0, err
	}
	// The runner's, without its secrets.
	environ := append(sandbox.WithoutSecrets(os.Environ()), env...)
	rep, rerr := startReport(g, root)
	if rerr != nil {
		// The old report could not be removed: what the guard would
		// leave there could be anybody's.
		res.Status, res.Error = StatusFail, rerr.Error()
		footer := fmt.Sprintf("=== guard %s: %s, exit %d, not run: %s ===\n", g.Name, res.Status, res.ExitCode, res.Error)
		if _, err := appendText(guardLog, footer); err != nil {
			return res, 0, 0, err
		}
		end, err = fileSize(guardLog)
		return res, start, end, err
	}
	pr := proc.Run(ctx, proc.Spec{
		Argv:      []string{"sh", "-c", g.Run},
		Dir:       root,
		Env:       environ,
		Log:       guardLog,
		LogAppend: true,
		LogLimit:  int64(g.OutputLimit),
		Timeout:   g.Timeout.Duration,
		Grace:     grace,
		Stdout:    rep.stdout(),
		Stderr:    rep.stderr(),
		Confine:   room,
	})
	res.Report, res.ReportErr = rep.finish()
	if pr.OutputErr != nil {
		return res, 0, 0, fmt.Errorf("guard %s: %w", g.Name, pr.OutputErr)
	}
	res.ExitCode = pr.ExitCode
	res.DurationMS = pr.Duration.Milliseconds()
	switch {
	case pr.StartErr != nil:
		res.Status, res.Error = StatusFail, "could not start: "+pr.StartErr.Error()
	case pr.TimedOut:
		res.Status, res.Error = StatusTimeout, fmt.Sprintf("timed out after %s; its process group was killed", g.Timeout.Duration)
	case pr.Canceled:
		res.Status, res.Error = StatusFail, "interrupted"
	case pr.Signal != "":
		res.Status, res.Error = StatusFail, "killed by "+pr.Signal
	case pr.ExitCode != 0:
		res.Status, res.Error = StatusFail, fmt.Sprintf("exited with status %d", pr.ExitCode)
	default:
		res.Status = StatusPass
	}
	if errors.Is(res.ReportErr, ErrNoReportWritten) && res.Status != StatusTimeout {
		// Its report is its verdict: without one, it did not show that
		// its tests pass.
		why := res.ReportErr.Error()
		if res.Error != "" {
			why = res.Error + "; " + why
		}
		res.Status, res.Error = StatusFail, why
	}
	footer := fmt.Sprintf("=== guard %s: %s, exit %d, %s", g.Name, res.Status, res.ExitCode, pr.Duration.Round(time.Millisecond))
	if res.Error != "" {
		footer += ", " + res.Error
	}
	footer += " ===\n"
	if !endsWithNewline(guardLog) {
		footer = "\n" + footer
	}
	if _, err := appendText(guardLog, footer); err != nil {
		return res, 0, 0, err
	}
	end, err = fileSize(guardLog)
	if err != nil {
		return res, 0, 0, fmt.Errorf("guard log: %w", err)
	}
	return res, start, end, nil
}

// appendText appends s to path and returns the offset where it starts.
func appendText(path, s string) (int64, error) {
	f, err := fsutil.OpenAppend(path)
	if err != nil {
		return 0, fmt.Errorf("write guard log: %w", err)
	}
	off, err := f.Seek(0, io.SeekEnd)
	if err == nil {
		_, err = f.WriteString(s)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("write guard log %s: %w", path, err)
	}
	return off, nil
}

func fileSize(path string) (int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func endsWithNewline(path string) bool {
	f, err := fsutil.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return true
	}
	var b [1]byte
	if _, err := f.ReadAt(b[:], st.Size()-1); err != nil {
		return true
	}
	return b[0] == '\n'
}

// copySection appends bytes [start, end) of src to dst.
func copySection(src, dst string, start, end int64) error {
	in, err := fsutil.Open(src)
	if err != nil {
		return fmt.Errorf("copy failing guard output: %w", err)
	}
	defer in.Close()
	out, err := fsutil.OpenAppend(dst)
	if err != nil {
		return fmt.Errorf("copy failing guard output: %w", err)
	}
	_, err = io.Copy(out, io.NewSectionReader(in, start, end-start))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("copy failing guard output to %s: %w", dst, err)
	}
	return nil
}

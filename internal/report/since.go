package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/state"
)

// Kinds of window (Since.Kind, Window.Kind).
const (
	KindRun       = "run"
	KindIteration = "iteration"
	KindTime      = "time"
	KindNight     = "night"
)

// nightSpan is how far back the default window reaches: the runs that
// ended in it, and the one in progress.
const nightSpan = 24 * time.Hour

// Since selects the part of the journal a report covers.
type Since struct {
	Kind      string
	Iteration int       // KindIteration: from this iteration on
	Time      time.Time // KindTime: from this time on
}

// LastRun is the window of the last `runner run` that worked on an
// iteration, to now (`--since run`).
var LastRun = Since{Kind: KindRun}

// Night is the default window at now: every run that ended in the last
// 24 hours (its last record then or later), and the one in progress; the
// last run when none did.
func Night(now time.Time) Since { return Since{Kind: KindNight, Time: now.Add(-nightSpan)} }

// ParseSince reads `--since`: an iteration number ("42"), how long ago
// ("8h", "90m", Go syntax), or a time: RFC 3339, "2006-01-02 15:04",
// "2006-01-02" (local time), or "15:04" (the last such time, today or
// yesterday). "" means Night, "run" LastRun.
func ParseSince(s string, now time.Time) (Since, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "", KindNight:
		return Night(now), nil
	case KindRun:
		return LastRun, nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 {
			return Since{}, fmt.Errorf("--since %s: iterations are numbered from 1", s)
		}
		return Since{Kind: KindIteration, Iteration: n}, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return Since{Kind: KindTime, Time: now.Add(-d)}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return Since{Kind: KindTime, Time: t}, nil
	}
	for _, layout := range []string{"2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, now.Location()); err == nil {
			return Since{Kind: KindTime, Time: t}, nil
		}
	}
	if t, err := time.ParseInLocation("15:04", s, now.Location()); err == nil {
		at := time.Date(now.Year(), now.Month(), now.Day(), t.Hour(), t.Minute(), 0, 0, now.Location())
		if at.After(now) {
			at = at.AddDate(0, 0, -1)
		}
		return Since{Kind: KindTime, Time: at}, nil
	}
	return Since{}, fmt.Errorf(`--since %q: want an iteration number (42), how long ago (8h, 90m), or a time ("2026-03-01 22:00", "22:00", RFC 3339); without --since the report covers the runs that ended in the last 24 hours`, s)
}

// iterationEvents are the journal events of an iteration's phases.
var iterationEvents = map[string]bool{
	state.EventStarted: true, state.EventAgentDone: true, state.EventGuardsDone: true, state.EventRecorded: true,
	state.EventInterrupted: true, state.EventAborted: true, state.EventRateLimited: true,
}

// window returns the journal records since selects, and describes them
// in w (all but the iterations, which the gatherer counts).
//
// A run is what one `runner run` did: the records from its run_started
// record on. The last run is the last one that has an iteration's record
// (a run that found nothing to do, or stopped at once, is not one to
// report on). A journal written before run_started records existed is cut
// where the runner_pid of the started records changes.
func window(recs []state.Record, since Since, w *Window) []state.Record {
	w.Kind = since.Kind
	start := len(recs)
	switch since.Kind {
	case KindIteration:
		w.FromIteration = since.Iteration
		for i, r := range recs {
			if iterationEvents[r.Event] && r.Iteration >= since.Iteration {
				start = i
				break
			}
		}
	case KindTime:
		t := since.Time
		w.From = &t
		for i, r := range recs {
			if !r.Time.Before(since.Time) {
				start = i
				break
			}
		}
	case KindNight:
		if i, runs := nightStart(recs, since.Time); runs > 0 {
			start = i
			from := recs[start].Time
			w.From, w.Runs = &from, runs
			break
		}
		w.Kind = KindRun // nothing in the span: the last run
		fallthrough
	default:
		w.Kind = KindRun
		start = lastRun(recs)
		if start < len(recs) {
			from := recs[start].Time
			w.From = &from
			w.RunnerPID = recs[start].RunnerPID
		}
	}
	out := recs[start:]
	if len(out) > 0 {
		until := out[len(out)-1].Time
		w.Until = &until
	}
	return out
}

// nightStart returns the index of the first record of the earliest run
// whose last record is at span or later, and how many runs from there on
// worked on an iteration; runs 0 when none did.
func nightStart(recs []state.Record, span time.Time) (start, runs int) {
	start = len(recs)
	end := len(recs) // the end of the run being looked at, going back
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Event != state.EventRunStarted {
			continue
		}
		if end > i && !recs[end-1].Time.Before(span) {
			worked := false
			for _, r := range recs[i:end] {
				worked = worked || iterationEvents[r.Event] && r.Iteration > 0
			}
			if worked {
				start, runs = i, runs+1
			}
		}
		end = i
	}
	return start, runs
}

// lastRun returns the index of the first record of the last run.
func lastRun(recs []state.Record) int {
	sawIteration, last := false, -1
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		switch {
		case r.Event == state.EventRunStarted && sawIteration:
			return i
		case r.Event == state.EventRunStarted && last < 0:
			last = i
		case iterationEvents[r.Event] && r.Iteration > 0:
			sawIteration = true
		}
	}
	if last >= 0 {
		return last // no run worked on an iteration: the last one
	}
	// No run_started record: the started records of the last runner.
	start, pid := len(recs), 0
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		if r.Event != state.EventStarted {
			continue
		}
		if pid != 0 && r.RunnerPID != pid {
			break
		}
		start, pid = i, r.RunnerPID
	}
	return start
}

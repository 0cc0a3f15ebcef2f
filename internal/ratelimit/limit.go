package ratelimit

import (
	"fmt"
	"time"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/textfmt"
)

// Limit is what a run knows of one executor's usage or rate limits (an
// agent's, or a reviewer's): until when it may not run (zero: it may),
// since when and why, and its backoff.
type Limit struct {
	Until time.Time
	Since time.Time
	Why   string
	// byReset says Until comes from the time the agent said its limit
	// resets (resetAt), which no wait is cut short of.
	byReset bool
	resetAt time.Time
	// limits counts its limits in a row, for the backoff.
	limits int
	// noted counts the limits ever noted: a run tells whether a limit
	// was noted while it ran (Ran).
	noted uint64
}

// Noted counts the limits noted so far; a run that started then says
// nothing of those noted later (Ran).
func (s *Limit) Noted() uint64 { return s.noted }

// Ran notes a run that hit no limit, one that started when noted limits
// were noted: its backoff starts again. A run that started before a
// limit another run hit (parallel slots share the executor) says nothing
// of that limit: it holds until it is over, and the next one in a row
// doubles the backoff.
func (s *Limit) Ran(noted uint64) {
	if s.noted == noted {
		s.Clear()
	}
}

// Clear forgets the limit and starts the backoff again.
func (s *Limit) Clear() {
	s.limits, s.Until, s.Why, s.byReset = 0, time.Time{}, "", false
}

// Hit notes a usage or rate limit at now, evidence its agent's words: it
// may run again once the limit has reset (resetAt, when the agent named
// it, plus loop.rate_limit_backoff as a margin) or, when the agent named
// none, after the backoff: loop.rate_limit_backoff doubling with each
// limit in a row, at most loop.rate_limit_backoff_max.
func (s *Limit) Hit(l config.Loop, evidence string, resetAt *time.Time, now time.Time) {
	base, capped := l.RateLimitBackoff.Duration, l.RateLimitBackoffMax.Duration
	s.Since, s.Why = now, textfmt.OneLine(evidence, 200)
	if resetAt != nil {
		s.Until, s.byReset, s.resetAt = now.Add(max(resetAt.Sub(now), 0)+base), true, *resetAt
	} else {
		wait := base
		for i := 0; i < s.limits && wait < capped; i++ {
			wait *= 2
		}
		s.Until, s.byReset = now.Add(min(wait, capped)), false
	}
	s.limits++
	s.noted++
}

// Wait decides how long to wait for the limit, having waited waited
// already in this iteration. ok is false, with the reason, when the wait
// would go past loop.max_wait: a limit that resets later than that
// allows, or a backoff that has used it up. A backoff is cut to what
// loop.max_wait leaves.
func (s *Limit) Wait(l config.Loop, waited time.Duration, now time.Time) (wait time.Duration, ok bool, why string) {
	left := l.MaxWait.Duration - waited
	wait = max(s.Until.Sub(now), 0)
	if s.byReset {
		if wait > left {
			return 0, false, fmt.Sprintf("the agent's limit resets at %s (in %s), later than loop.max_wait (%s) allows",
				s.resetAt.Local().Format("2006-01-02 15:04"), Round(wait), l.MaxWait.Duration)
		}
		return wait, true, ""
	}
	if left <= 0 {
		return 0, false, fmt.Sprintf("the limit has not lifted after waiting %s (loop.max_wait)", Round(waited))
	}
	return min(wait, left), true, ""
}

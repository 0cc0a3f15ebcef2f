// Package ratelimit decides how long the runner waits when an agent hits
// a usage or rate limit, and waits (SPEC §5): the agent runs again after
// the wait without spending an attempt, until the waits of one agent run
// add up to loop.max_wait. `runner run` and `runner plan` wait the same
// way.
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/runner-cli/runner/internal/config"
)

// ErrGaveUp ends a run whose usage or rate limit lasts longer than
// loop.max_wait allows.
var ErrGaveUp = errors.New("usage or rate limit outlasts loop.max_wait")

// ErrStopped reports that `runner stop` was asked while the runner
// waited (for a limit to lift, for a person to fix an input it could not
// record into): the run ends as it does at a boundary.
var ErrStopped = errors.New("stop requested while waiting for a fix")

// Policy is how the runner waits, from the [loop] table of config.toml.
type Policy struct {
	// Backoff is the first wait, doubled after each further limit in a
	// row up to BackoffMax; it is also the margin added to a reset time
	// the agent named.
	Backoff, BackoffMax time.Duration
	// MaxWait is the most the waits for one agent run may add up to.
	MaxWait time.Duration
}

// PolicyFrom returns the policy of loop.rate_limit_backoff,
// loop.rate_limit_backoff_max and loop.max_wait.
func PolicyFrom(l config.Loop) Policy {
	return Policy{Backoff: l.RateLimitBackoff.Duration, BackoffMax: l.RateLimitBackoffMax.Duration, MaxWait: l.MaxWait.Duration}
}

// Wait decides how long to wait after the retry-th rate-limited run of
// an agent (0 for the first), having waited waited already. resetAt is
// when the agent said its limit resets (nil when it did not), read
// against now: the wait then lasts until the reset plus Backoff.
// Otherwise it is Backoff doubled retry times, capped at BackoffMax. ok
// is false, with the reason, when the wait would go past MaxWait.
func (p Policy) Wait(resetAt *time.Time, now time.Time, retry int, waited time.Duration) (wait time.Duration, ok bool, why string) {
	left := p.MaxWait - waited
	if resetAt != nil {
		// The agent named the reset: wait until then, plus a margin.
		wait = max(resetAt.Sub(now), 0) + p.Backoff
		if wait > left {
			return 0, false, fmt.Sprintf("the agent's limit resets at %s (in %s), later than loop.max_wait (%s) allows",
				resetAt.Local().Format("2006-01-02 15:04"), Round(wait), p.MaxWait)
		}
		return wait, true, ""
	}
	wait = p.Backoff
	for i := 0; i < retry && wait < p.BackoffMax; i++ {
		wait *= 2
	}
	wait = min(wait, p.BackoffMax)
	if left <= 0 {
		return 0, false, fmt.Sprintf("the limit has not lifted after waiting %s (loop.max_wait)", Round(waited))
	}
	return min(wait, left), true, ""
}

// End says how a Sleep ended.
type End int

// The ends of a Sleep.
const (
	Slept       End = iota // the whole duration passed
	Interrupted            // ctx ended
	Stopped                // the stop file appeared
)

// stopPollEvery is how often Sleep looks for the stop file.
const stopPollEvery = time.Second

// Sleep sleeps for d unless ctx ends or, when stopFile is not "", the
// file stopFile appears (`runner stop` asks a run to stop that way).
func Sleep(ctx context.Context, d time.Duration, stopFile string) End {
	timer := time.NewTimer(d)
	defer timer.Stop()
	var poll <-chan time.Time
	if stopFile != "" {
		t := time.NewTicker(min(stopPollEvery, max(d/4, time.Millisecond)))
		defer t.Stop()
		poll = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return Interrupted
		case <-timer.C:
			return Slept
		case <-poll:
			if _, err := os.Stat(stopFile); err == nil {
				return Stopped
			}
		}
	}
}

// Round rounds a wait for people: to the second above a minute, to a
// tenth of a second above a second, else to the millisecond.
func Round(d time.Duration) time.Duration {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

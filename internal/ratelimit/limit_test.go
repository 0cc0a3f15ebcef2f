package ratelimit

import (
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/config"
	executor "github.com/runner-cli/runner/internal/exec"
)

// TestLimitOutlivesRunsStartedBefore: with parallel slots, runs of one
// executor that started before another run hit a usage limit finish after
// it; they must not clear the limit, nor reset the backoff that doubles
// with each limit in a row. A run that started after the limit clears it.
func TestLimitOutlivesRunsStartedBefore(t *testing.T) {
	loop := config.Loop{}
	loop.RateLimitBackoff.Duration, loop.RateLimitBackoffMax.Duration = time.Minute, time.Hour
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	limited := &executor.Result{Class: executor.ClassRateLimited, Evidence: "429"}
	l := &Limit{}

	before := l.noted // a run starts: no limit noted yet
	l.Hit(loop, limited.Evidence, limited.ResetAt, now)
	l.Ran(before) // it finishes after the 429 of another slot
	if !l.Until.Equal(now.Add(time.Minute)) || l.limits != 1 {
		t.Fatalf("a run that started before the limit cleared it: until %v, limits %d", l.Until, l.limits)
	}
	l.Hit(loop, limited.Evidence, limited.ResetAt, now)
	if want := now.Add(2 * time.Minute); !l.Until.Equal(want) {
		t.Errorf("the second limit in a row waits until %v, want %v (the backoff doubles)", l.Until, want)
	}

	after := l.noted // a run that starts once the limit is over
	l.Ran(after)
	if !l.Until.IsZero() || l.limits != 0 {
		t.Errorf("a run that started after the limit and hit none left until %v, limits %d", l.Until, l.limits)
	}
}

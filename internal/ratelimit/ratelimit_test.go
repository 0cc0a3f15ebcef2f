package ratelimit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWait(t *testing.T) {
	p := Policy{Backoff: time.Minute, BackoffMax: 8 * time.Minute, MaxWait: time.Hour}
	now := time.Date(2026, 11, 24, 7, 0, 0, 0, time.UTC)
	in := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	tests := []struct {
		name    string
		resetAt *time.Time
		retry   int
		waited  time.Duration
		want    time.Duration
		ok      bool
		why     string
	}{
		{"first", nil, 0, 0, time.Minute, true, ""},
		{"doubled", nil, 2, 0, 4 * time.Minute, true, ""},
		{"capped", nil, 10, 0, 8 * time.Minute, true, ""},
		{"cut to what is left", nil, 3, 55 * time.Minute, 5 * time.Minute, true, ""},
		{"nothing left", nil, 3, time.Hour, 0, false, "has not lifted after waiting 1h0m0s"},
		{"reset named", in(20 * time.Minute), 0, 0, 21 * time.Minute, true, ""},
		{"reset passed", in(-time.Minute), 0, 0, time.Minute, true, ""},
		{"reset too late", in(2 * time.Hour), 0, 0, 0, false, "later than loop.max_wait (1h0m0s) allows"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, why := p.Wait(tt.resetAt, now, tt.retry, tt.waited)
			if got != tt.want || ok != tt.ok || (tt.why == "") != (why == "") || !strings.Contains(why, tt.why) {
				t.Errorf("Wait = %s, %v, %q; want %s, %v, %q", got, ok, why, tt.want, tt.ok, tt.why)
			}
		})
	}
}

func TestSleep(t *testing.T) {
	if got := Sleep(context.Background(), time.Millisecond, ""); got != Slept {
		t.Errorf("a short sleep ended %v, want Slept", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := Sleep(ctx, time.Hour, ""); got != Interrupted {
		t.Errorf("a canceled sleep ended %v, want Interrupted", got)
	}
	stop := filepath.Join(t.TempDir(), "stop")
	if err := os.WriteFile(stop, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Sleep(context.Background(), time.Hour, stop); got != Stopped {
		t.Errorf("a sleep with the stop file there ended %v, want Stopped", got)
	}
}

func TestRound(t *testing.T) {
	for d, want := range map[time.Duration]time.Duration{
		1234567 * time.Microsecond:            1200 * time.Millisecond,
		90*time.Second + 400*time.Millisecond: 90 * time.Second,
		1500 * time.Microsecond:               2 * time.Millisecond,
	} {
		if got := Round(d); got != want {
			t.Errorf("Round(%s) = %s, want %s", d, got, want)
		}
	}
}

package loop

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/state"
)

// eventually waits, bounded, until cond holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ended waits, bounded, for the run of done to end; late says what did
// not happen when it does not.
func ended(t *testing.T, done <-chan runOutcome, late string) runOutcome {
	t.Helper()
	select {
	case o := <-done:
		return o
	case <-time.After(time.Minute):
		t.Fatal(late)
		return runOutcome{}
	}
}

func runAsync(ctx context.Context, p state.Paths, notices *syncBuffer) <-chan runOutcome {
	done := make(chan runOutcome, 1)
	go func() {
		res, err := Run(ctx, Options{Paths: p, Progress: &syncBuffer{}, Notices: notices})
		done <- runOutcome{res, err}
	}()
	return done
}

func TestPauseHoldsAfterTheIterationUntilResume(t *testing.T) {
	// The first agent run waits for the file "release", so that the pause
	// is asked while it works.
	p := agentRepo(t, countingAgent(`1) while [ ! -f release ]; do sleep 0.01; done; `+doneMessage+`;;
*) `+doneMessage+`;;`), "")
	runs := filepath.Join(p.Root, "runs")
	var notices syncBuffer
	done := runAsync(context.Background(), p, &notices)
	eventually(t, "the first agent runs", func() bool { _, err := os.Stat(runs); return err == nil })

	write(t, p.PauseRequest(), "paused by a test\n")
	write(t, filepath.Join(p.Root, "release"), "")
	eventually(t, "the runner holds", func() bool { return strings.Contains(notices.String(), "runner: paused") })
	// The iteration under way finished and was recorded; none started since.
	time.Sleep(300 * time.Millisecond)
	if got := len(events(t, p, state.EventRecorded)); got != 1 {
		t.Fatalf("%d iterations recorded while paused; want 1", got)
	}
	if got := len(events(t, p, state.EventStarted)); got != 1 {
		t.Fatalf("%d iterations started while paused; want 1", got)
	}
	if data, _ := os.ReadFile(runs); strings.TrimSpace(string(data)) != "1" {
		t.Fatalf("the agent ran %s times while paused; want 1", data)
	}

	if err := os.Remove(p.PauseRequest()); err != nil {
		t.Fatal(err)
	}
	o := ended(t, done, "the run did not go on after resume")
	if o.err != nil || o.res.Reason != Complete {
		t.Fatalf("run: %v %+v; want complete", o.err, o.res)
	}
	// That a resume wakes the hold at once, not at its next re-check, is
	// TestResumeWakesTheHold's (no clock involved).
	if !strings.Contains(notices.String(), "runner: resumed") {
		t.Errorf("notices do not say resumed:\n%s", notices.String())
	}
}

func TestPauseBeforeRunHoldsUntilStop(t *testing.T) {
	p := agentRepo(t, countingAgent(`*) `+doneMessage+`;;`), "")
	if err := os.MkdirAll(p.StateDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, p.PauseRequest(), "paused by a test\n")
	var notices syncBuffer
	done := runAsync(context.Background(), p, &notices)
	eventually(t, "the runner holds", func() bool { return strings.Contains(notices.String(), "runner: paused") })
	write(t, p.StopRequest(), "stop\n")
	o := ended(t, done, "runner stop did not end a paused run")
	if o.err != nil || o.res.Reason != Stopped || o.res.Iterations != 0 {
		t.Fatalf("run: %v %+v; want stopped before any iteration", o.err, o.res)
	}
	if _, err := os.Stat(p.PauseRequest()); err != nil {
		t.Errorf("the pause did not outlive the stopped run: %v", err)
	}
	if got := len(events(t, p, state.EventStarted)); got != 0 {
		t.Errorf("%d iterations started; want none", got)
	}
}

func TestPausedRunEndsOnInterrupt(t *testing.T) {
	p := agentRepo(t, countingAgent(`*) `+doneMessage+`;;`), "")
	if err := os.MkdirAll(p.StateDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, p.PauseRequest(), "paused by a test\n")
	ctx, cancel := context.WithCancel(context.Background())
	var notices syncBuffer
	done := runAsync(ctx, p, &notices)
	eventually(t, "the runner holds", func() bool { return strings.Contains(notices.String(), "runner: paused") })
	cancel()
	o := ended(t, done, "an interrupt did not end a paused run")
	if o.err != nil || o.res.Reason != Interrupted {
		t.Fatalf("run: %v %+v; want interrupted", o.err, o.res)
	}
}

// TestResumeWakesTheHold: the hold watches the pause file, so a resume
// ends it at once. The hold re-checks only every hour here: a hold that
// ends at all before the test's bound was woken by the watch.
func TestResumeWakesTheHold(t *testing.T) {
	r, n := newTestRunner(t, context.Background())
	write(t, r.p.PauseRequest(), "paused by a test\n")
	held := make(chan bool, 1)
	go func() { held <- r.holdWhilePaused(context.Background()) }()
	n.waitNotice(t, "runner: paused")
	if err := os.Remove(r.p.PauseRequest()); err != nil {
		t.Fatal(err)
	}
	select {
	case h := <-held:
		if !h {
			t.Fatal("holdWhilePaused did not hold while paused")
		}
	case <-time.After(time.Minute):
		t.Fatal("the hold did not end after resume; it waited for its hourly re-check")
	}
	if !strings.Contains(n.String(), "runner: resumed") {
		t.Errorf("notices do not say resumed:\n%s", n.String())
	}
}

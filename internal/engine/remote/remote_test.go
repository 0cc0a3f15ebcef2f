package remote

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/charmbracelet/log"

	"github.com/runner-cli/runner/internal/lane"
)

// A push to engine.remote or a fetch from it that fails is tried again
// after each wait; the last error ends the tries, and an interrupted run
// does not wait.
func TestRetryRemote(t *testing.T) {
	defer func(waits []time.Duration) { remoteRetries = waits }(remoteRetries)
	remoteRetries = []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond}
	w := &Engine{env: &lane.Env{Log: log.New(io.Discard)}}
	away := errors.New("the remote is away")

	calls := 0
	err := w.retryRemote(context.Background(), func() error {
		if calls++; calls < 3 {
			return away
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Errorf("back on the third try: err %v after %d calls, want nil after 3", err, calls)
	}

	calls = 0
	err = w.retryRemote(context.Background(), func() error { calls++; return away })
	if !errors.Is(err, away) || calls != 1+len(remoteRetries) {
		t.Errorf("always away: err %v after %d calls, want %v after %d", err, calls, away, 1+len(remoteRetries))
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls = 0
	err = w.retryRemote(ctx, func() error { calls++; return away })
	if !errors.Is(err, away) || calls != 1 {
		t.Errorf("interrupted: err %v after %d calls, want one call", err, calls)
	}
}

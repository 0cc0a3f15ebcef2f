package watch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// deadline is the most any test here waits for what it expects.
const deadline = 10 * time.Second

func TestUntilChecksAtOnce(t *testing.T) {
	calls := 0
	err := Until(context.Background(), []string{filepath.Join(t.TempDir(), "f")}, Wait{Recheck: time.Hour}, func() bool {
		calls++
		return true
	})
	if err != nil || calls != 1 {
		t.Fatalf("Until = %v after %d checks; want nil after 1", err, calls)
	}
}

func TestUntilWakesOnAChange(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tree.json")
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	var first atomic.Bool
	err := Until(ctx, []string{file}, Wait{Recheck: time.Hour, Options: Options{Debounce: 10 * time.Millisecond}}, func() bool {
		if !first.Swap(true) {
			// The watch is up before the first check: a change made now
			// is not lost.
			editorSave(t, file, "new")
			return false
		}
		data, _ := os.ReadFile(file)
		return string(data) == "new"
	})
	if err != nil {
		t.Fatalf("Until = %v; want nil once the change was seen (the recheck is an hour away)", err)
	}
}

func TestUntilRechecksOnATimer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	calls := 0
	err := Until(ctx, []string{filepath.Join(t.TempDir(), "f")}, Wait{Recheck: 5 * time.Millisecond}, func() bool {
		calls++
		return calls == 3
	})
	if err != nil {
		t.Fatalf("Until = %v after %d checks; want nil after 3 without any change", err, calls)
	}
}

func TestUntilEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	checked := make(chan struct{}, 1)
	go func() {
		done <- Until(ctx, []string{filepath.Join(t.TempDir(), "f")}, Wait{Recheck: time.Hour}, func() bool {
			select {
			case checked <- struct{}{}:
			default:
			}
			return false
		})
	}()
	<-checked
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Until = %v; want context.Canceled", err)
		}
	case <-time.After(deadline):
		t.Fatal("Until did not return after its context was cancelled")
	}
}

func TestUntilPollsWhatItCannotWatch(t *testing.T) {
	// Neither the file's folder nor its parent exists: nothing to watch.
	file := filepath.Join(t.TempDir(), "no", "such", "f")
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	var why error
	calls := 0
	err := Until(ctx, []string{file}, Wait{Recheck: time.Hour, Poll: 5 * time.Millisecond, Unwatched: func(err error) { why = err }},
		func() bool {
			calls++
			return calls == 2
		})
	if err != nil {
		t.Fatalf("Until = %v; want nil from polling (the recheck is an hour away)", err)
	}
	if why == nil {
		t.Error("Unwatched was not told why the file cannot be watched")
	}
}

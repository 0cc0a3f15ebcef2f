package live

import (
	"os"
	"path/filepath"
	"testing"
)

// An iteration on a worker has no events file on the coordinator: its
// latest event is the one the worker reported, kept beside it.
func TestLatestEventFromAWorker(t *testing.T) {
	dir := t.TempDir()
	events := filepath.Join(dir, "events.jsonl")
	if got := LatestEvent(events); got != "" {
		t.Errorf("no file: %q", got)
	}
	if err := os.WriteFile(filepath.Join(dir, WorkerEventFile), []byte("running go test ./...\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := LatestEvent(events); got != "running go test ./..." {
		t.Errorf("the worker's event: %q", got)
	}
}

package proc

import (
	"encoding/json"
	"fmt"
	"syscall"
	"time"

	"github.com/runner-cli/runner/internal/fsutil"
)

// ExitRecord is what Spec.ExitFile holds once the command's main process
// has exited: written by whoever reaps it (the supervisor, or Run for a
// command it started itself) as soon as it does, so that a runner that
// dies right after the command ended leaves its exit status to the next
// one.
type ExitRecord struct {
	Code   int    `json:"code"`             // exit status, when no signal killed it
	Signal string `json:"signal,omitempty"` // the signal that killed it ("SIGTERM")
	// Stopped is set when the command was being stopped (a timeout, a
	// cancel, the runner's death): it did not end by itself.
	Stopped bool  `json:"stopped,omitempty"`
	TookMS  int64 `json:"took_ms"`
}

// writeExitRecord writes rec to path, not durably: it is for a runner
// that died, not for a machine that crashed. Failures are ignored (the
// record only adds to what the command's files say).
func writeExitRecord(path string, code int, sig syscall.Signal, stopped bool, took time.Duration) {
	if path == "" {
		return
	}
	rec := ExitRecord{Code: code, Stopped: stopped, TookMS: took.Milliseconds()}
	if sig != 0 {
		rec.Code, rec.Signal = -1, signalName(sig)
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return
	}
	fsutil.ReplaceFile(path, append(data, '\n'), 0o644, fsutil.NotSynced)
}

// ReadExitRecord reads an exit record written for Spec.ExitFile.
func ReadExitRecord(path string) (*ExitRecord, error) {
	data, err := fsutil.ReadLimited(path, 4096, true)
	if err != nil {
		return nil, err
	}
	var rec ExitRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	return &rec, nil
}

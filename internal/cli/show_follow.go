package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/live"
	"github.com/runner-cli/runner/internal/state"
)

// followPoll is how often `runner show --follow` looks at the run folder.
const followPoll = 250 * time.Millisecond

// followIteration streams iteration n while it is under way: what its
// agent prints (executor.log, as it grows) and each new latest event of
// its CLI's stream, until the iteration is recorded (its meta.json says
// so, or it is no longer in flight); then what `runner show` says of it.
// Of an iteration on a worker only the events its heartbeat reports can
// be followed; it says so. It only reads.
func followIteration(ctx context.Context, g *globals, p state.Paths, n int) error {
	runDir := p.RunDir(n)
	out := g.streams.Out
	var offset int64
	lastEvent, worker := "", ""
	for {
		ended, on := iterationState(p, n)
		if worker == "" && on != "" {
			worker = on
			fmt.Fprintf(out, "── on worker %s: its latest events follow; what the agent printed arrives when the iteration ends\n", inert.Line(worker))
		}
		offset = copyNew(out, filepath.Join(runDir, "executor.log"), offset)
		if e := live.LatestEvent(filepath.Join(runDir, "events.jsonl")); e != "" && e != lastEvent {
			fmt.Fprintf(out, "── %s\n", inert.Line(e))
			lastEvent = e
		}
		if ended {
			copyNew(out, filepath.Join(runDir, "executor.log"), offset)
			m, err := state.LoadMeta(runDir)
			if err != nil {
				return err
			}
			fmt.Fprintln(out)
			printMeta(out, p, runDir, m)
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(followPoll):
		}
	}
}

// iterationState reads iteration n's meta.json and the run state once:
// whether it is recorded (its meta.json is in a final phase, or no
// runner has it in flight any more and its meta.json exists), and the
// worker it runs on while in flight ("": none, or not known yet).
func iterationState(p state.Paths, n int) (ended bool, worker string) {
	m, merr := state.LoadMeta(p.RunDir(n))
	if merr == nil && (m.Phase == state.PhaseRecorded || m.Phase == state.PhaseAborted) {
		return true, ""
	}
	rs, err := state.LoadRunState(p.RunState())
	if err != nil {
		return false, ""
	}
	for _, f := range state.CurrentInFlights(p, rs) {
		if f.Iteration == n {
			return false, f.Worker
		}
	}
	return merr == nil, ""
}

// copyNew copies what the file at path holds past offset to w, and
// returns the new offset; a missing file copies nothing. What is copied
// is made inert (no terminal control sequence from the agent).
func copyNew(w io.Writer, path string, offset int64) int64 {
	f, err := os.Open(path)
	if err != nil {
		return offset
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() < offset {
		return offset // cut and rewritten: leave it
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return offset
	}
	data, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil && !errors.Is(err, io.EOF) {
		return offset
	}
	if len(data) > 0 {
		io.WriteString(w, inert.Text(string(data)))
	}
	return offset + int64(len(data))
}

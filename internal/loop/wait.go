package loop

import (
	"context"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/ratelimit"
	"github.com/runner-cli/runner/internal/spend"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
	"github.com/runner-cli/runner/internal/watch"
)

// How often a waiting runner re-checks its inputs without being told to:
// a fallback for file systems whose change notifications are unreliable,
// and the only check when notifications cannot be set up at all.
const (
	recheckWatching = 5 * time.Second
	recheckPolling  = time.Second
)

// errStopWhileWaiting reports that `runner stop` was asked while the
// runner waited for a person to fix an input it could not record into.
var errStopWhileWaiting = ratelimit.ErrStopped

// fileSum identifies the content of a file: its size and a 64-bit hash
// of its bytes (hash/maphash, seeded at random for each process, so that
// two different contents match by chance about once in 2^64), or the
// reason it could not be read.
type fileSum struct {
	size int64
	sum  uint64
	err  string
}

// sumSeed seeds fileSum's hash for the life of the process.
var sumSeed = maphash.MakeSeed()

func sumBytes(data []byte) fileSum {
	return fileSum{size: int64(len(data)), sum: maphash.Bytes(sumSeed, data)}
}

func sumFile(path string) fileSum {
	f, err := fsutil.Open(path)
	if err != nil {
		return fileSum{err: err.Error()}
	}
	defer f.Close()
	var h maphash.Hash
	h.SetSeed(sumSeed)
	n, err := io.Copy(&h, f)
	if err != nil {
		return fileSum{err: err.Error()}
	}
	return fileSum{size: n, sum: h.Sum64()}
}

// inputs identifies the content of config.toml and tree.json as the
// runner last read or wrote them. A waiting runner goes on only when the
// files differ from it, so neither its own writes nor an event that
// changed nothing (a chmod, a save of identical bytes) wakes it.
type inputs struct {
	config, tree fileSum
}

// inputState is what the run knows of the files a person edits while it
// runs, and what it told them about those.
type inputState struct {
	// seen is config.toml and tree.json as the runner last read or wrote
	// them; a wait ends when the files differ from it.
	seen         inputs
	recheck      time.Duration // waits re-check inputs this often; 0: recheckWatching
	invalid      string        // the invalid-input report last printed
	invalidFiles string        // the files it named
	waiting      string        // why the run last said it was waiting
	refusedSaid  ownedNotice   // edits of runner-owned fields reported (owned.go)
	// forged is what unconfined slots' programs forged in the runner's
	// files, not yet noted on an iteration (forgedslots.go).
	forged forgery
}

func (r *Runner) fingerprint() inputs {
	return inputs{config: sumFile(r.p.Config()), tree: sumFile(r.p.Tree())}
}

// waitEnd says why a wait ended.
type waitEnd int

const (
	inputsChanged waitEnd = iota
	stopAsked
	cancelled
)

func (r *Runner) stopRequested() bool {
	_, err := os.Stat(r.p.StopRequest())
	return err == nil
}

// waitForChange blocks until config.toml or tree.json differs from seen,
// `runner stop` is asked, or ctx ends. It watches the files' directories
// (an editor's save renames a new file over the old one), and re-checks
// every few seconds in case a notification is lost.
func (r *Runner) waitForChange(ctx context.Context, seen inputs) waitEnd {
	r.ledger.FlushOrLog() // a wait may be long: run_state.json says where the loop stands
	recheck := recheckWatching
	if r.in.recheck > 0 {
		recheck = r.in.recheck
	}
	end := cancelled
	watch.Until(ctx, []string{r.p.Config(), r.p.Tree(), r.p.StopRequest()}, watch.Wait{
		Recheck: recheck, Poll: recheckPolling,
		Options: watch.Options{OnError: func(err error) { r.log.Warn("watching .runner for changes", "err", err) }},
		Unwatched: func(err error) {
			r.log.Warn("cannot watch .runner for changes; checking every second instead", "err", err)
		},
	}, func() bool {
		// The watch is set up before the first check, so a change made at
		// any moment after the caller read the files is seen. A change wins
		// over a stop, so that an iteration waiting to be recorded gets
		// recorded when both come together.
		switch {
		case r.fingerprint() != seen:
			r.log.Debug("inputs changed; reading them again")
			end = inputsChanged
		case r.stopRequested():
			end = stopAsked
		default:
			return false
		}
		return true
	})
	return end
}

// loadInputs re-reads config.toml and tree.json at an iteration boundary.
// When either does not load (typically a person's edit that does not
// validate), it says so, leaves the files exactly as they are, and waits
// until they change; ok is false when a stop was asked or ctx ended while
// it waited.
func (r *Runner) loadInputs(ctx context.Context) (t *tree.Tree, ok bool) {
	for {
		cfg, cfgSum, cfgErr := r.cache.configs.load(r.p.Config())
		t, treeSum, treeErr := r.cache.trees.load(r.p.Tree())
		if cfgErr == nil && treeErr == nil {
			// A task's executors name the config's executors.
			treeErr = spend.UnknownExecutors(cfg, t, r.p.Rel(r.p.Tree()))
		}
		seen := inputs{config: cfgSum, tree: treeSum} // what was read, valid or not
		if cfgErr == nil && treeErr == nil {
			r.cfg = cfg
			r.in.seen = seen
			r.inputsValid()
			return t, true
		}
		var bad []badInput
		if cfgErr != nil {
			bad = append(bad, badInput{r.p.Config(), cfgErr})
		}
		if treeErr != nil {
			bad = append(bad, badInput{r.p.Tree(), treeErr})
		}
		r.reportInvalid("", bad)
		if r.waitForChange(ctx, seen) != inputsChanged {
			return nil, false
		}
	}
}

// treeForRecord loads tree.json to record iteration n into it. A tree that
// does not load is reported and waited out like at a boundary: the
// iteration stays in flight (its results are saved) until the tree is
// fixed. When a stop is asked or the run is interrupted meanwhile, the
// error says so and the next `runner run` records the iteration.
func (r *Runner) treeForRecord(ctx context.Context, n int) (*tree.Tree, error) {
	for {
		seen := r.fingerprint()
		t, err := r.loadTree()
		if err == nil {
			r.inputsValid()
			return t, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("record iteration %d: %w; the iteration stays in flight and is recorded once the tree is fixed", n, err)
		}
		r.reportInvalid(fmt.Sprintf("cannot record iteration %d", n), []badInput{{r.p.Tree(), err}})
		switch r.waitForChange(ctx, seen) {
		case stopAsked:
			return nil, fmt.Errorf("record iteration %d: %w; the iteration stays in flight and the next `runner run` records it once %s is valid",
				n, errStopWhileWaiting, r.p.Rel(r.p.Tree()))
		case cancelled:
			return nil, fmt.Errorf("record iteration %d: interrupted while waiting for %s to be fixed; the iteration stays in flight and the next `runner run` records it",
				n, r.p.Rel(r.p.Tree()))
		}
	}
}

type badInput struct {
	path string
	err  error
}

// reportInvalid tells the person which files do not load and why, once
// per distinct problem.
func (r *Runner) reportInvalid(what string, bad []badInput) {
	var b strings.Builder
	var names []string
	for _, in := range bad {
		names = append(names, r.p.Rel(in.path))
		fmt.Fprintf(&b, "runner: %s does not load", r.p.Rel(in.path))
		if what != "" {
			fmt.Fprintf(&b, " (%s)", inert.Line(what))
		}
		b.WriteString("; it is left exactly as it is and the run waits for a fix (`runner stop` ends the run):\n")
		for _, line := range strings.Split(strings.TrimRight(inert.Text(in.err.Error()), "\n"), "\n") {
			b.WriteString("  " + line + "\n")
		}
	}
	if b.String() == r.in.invalid {
		return
	}
	r.in.invalid = b.String()
	r.in.invalidFiles = strings.Join(names, " and ")
	fmt.Fprint(r.opts.Notices, r.in.invalid)
}

// inputsValid notes that the inputs load again after a reported problem.
func (r *Runner) inputsValid() {
	if r.in.invalid == "" {
		return
	}
	r.in.invalid = ""
	fmt.Fprintf(r.opts.Notices, "runner: %s: valid again; going on\n", r.in.invalidFiles)
}

// waitWatching prints why the run is idle (once per distinct reason) and
// waits for the inputs to change.
func (r *Runner) waitWatching(ctx context.Context, why string) {
	if why != r.in.waiting {
		r.in.waiting = why
		fmt.Fprintf(r.opts.Notices, "runner: %s; waiting for %s or %s to change (`runner stop` to exit)\n",
			inert.Text(why), r.p.Rel(r.p.Tree()), r.p.Rel(r.p.Config()))
	}
	r.waitForChange(ctx, r.in.seen)
}

// consumeStop removes a stop request, reporting whether there was one.
func consumeStop(p state.Paths) bool {
	if _, err := os.Stat(p.StopRequest()); err != nil {
		return false
	}
	fsutil.Remove(p.StopRequest())
	return true
}

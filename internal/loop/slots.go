package loop

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/iteration"
	"github.com/runner-cli/runner/internal/runbranch"
)

// Parallel slots (SPEC §14): with loop.parallel = N above 1, up to N
// tasks are worked on at once, each in a slot: a linked worktree beside
// the checkout, its HEAD detached at the run branch's checkpoint the task
// started from, reused from task to task. The run's code is not made
// concurrent: one goroutine per busy slot runs the same iteration code as
// without slots, under the run's lock, which it gives up only while a
// process works (the agent, the reviewer, the guards) or a wait lasts.
// The ledger, the tree and the run branch thus have one writer at a
// time. Each goroutine's iteration works in its own lane (worker): its
// slot's worktree, checkpoints and progress output.

// parallel is a run's slots and the lock their goroutines share.
type parallel struct {
	mu    sync.Mutex
	slots map[int]*slot
}

// slot is one worktree tasks are worked on in.
type slot struct {
	id   int
	ck   *runbranch.Tree // its worktree, the checkpoint its task started from, its leftovers
	busy string          // the task worked on, "" when free
	out  io.Writer       // the progress output, its lines naming the slot
}

// lane is where one iteration works, its own while it works: the
// working tree (the run branch's, or a slot's worktree), its checkpoints
// (nil without git), its slot (0: none) and its progress output.
type lane struct {
	workDir string
	ck      *runbranch.Tree
	slot    int
	out     io.Writer
}

// worker is the Runner as one iteration sees it: what the run shares
// (the ledger, the tree, the run branch, the executors), used under the
// run's lock, and the lane the iteration works in.
type worker struct {
	*Runner
	lane
	// remoteJudged says the iteration ran on a worker (remote.go), whose
	// guards judged it: remoteJudgement, nil when they did not run.
	remoteJudged    bool
	remoteJudgement *iteration.Judgement
}

// mainWorker works in the run branch's working tree.
func (r *Runner) mainWorker() *worker {
	return &worker{Runner: r, lane: lane{workDir: r.branch.Dir(), ck: r.branch.Main(), out: r.opts.Progress}}
}

// slotWorker works in slot s.
func (r *Runner) slotWorker(s *slot) *worker {
	return &worker{Runner: r, lane: lane{workDir: s.ck.Repo().Top(), ck: s.ck, slot: s.id, out: s.out}}
}

// outside runs f without the run's lock, so that other slots go on while
// it waits for a process or a timer; what f reads of the run's shared
// state it must read before. Without slots it just runs f.
func (r *Runner) outside(f func()) {
	if r.par == nil {
		f()
		return
	}
	r.par.mu.Unlock()
	defer r.par.mu.Lock()
	f()
}

// inside runs f under the run's lock from code that runs outside it (a
// process's start callback).
func (r *Runner) inside(f func()) {
	if r.par == nil {
		f()
		return
	}
	r.par.mu.Lock()
	defer r.par.mu.Unlock()
	f()
}

// slotFor returns slot id, opening its worktree when the run has not yet
// (runbranch.Branch.Slot).
func (r *Runner) slotFor(ctx context.Context, id int) (*slot, error) {
	if s := r.par.slots[id]; s != nil {
		return s, nil
	}
	ck, err := r.branch.Slot(ctx, r.cfg, id)
	if err != nil {
		return nil, err
	}
	s := &slot{id: id, ck: ck, out: &prefixWriter{w: r.opts.Progress, prefix: fmt.Sprintf("[slot %d] ", id)}}
	r.par.slots[id] = s
	return s, nil
}

// tidySlots puts every free slot that holds what no task goes on from at
// the run branch's checkpoint (runbranch.Tree.Tidy), so that a run does
// not end with a worktree holding changes. The slots of a previous run
// that this one did not use are looked at too, when their worktree is
// there. Nothing is done once the run is interrupted.
func (r *Runner) tidySlots(ctx context.Context) error {
	if ctx.Err() != nil {
		return nil
	}
	for id := 1; id <= config.MaxParallel; id++ {
		s := r.par.slots[id]
		if s == nil {
			path, err := r.branch.SlotPath(id)
			if err != nil {
				continue
			}
			if _, err := os.Lstat(path); err != nil {
				continue // no worktree there
			}
			if s, err = r.slotFor(ctx, id); err != nil {
				continue // not a slot's; said when the slot is used
			}
		}
		if s.busy != "" {
			continue
		}
		if err := s.ck.Tidy(ctx); err != nil {
			return err
		}
	}
	return nil
}

// prefixWriter starts every line written to w with prefix. Each Write is
// expected to hold whole lines, as the progress output's do.
type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	var out bytes.Buffer
	for _, line := range bytes.SplitAfter(b, []byte{'\n'}) {
		if len(line) > 0 {
			out.WriteString(p.prefix)
			out.Write(line)
		}
	}
	if _, err := p.w.Write(out.Bytes()); err != nil {
		return 0, err
	}
	return len(b), nil
}

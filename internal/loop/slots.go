package loop

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/lane"
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
// time. Each goroutine's iteration works in its own lane (laneFor): its
// slot's worktree, checkpoints and progress output.

// parallel is a run's slots; the goroutines of their iterations share
// the run's lock (lane.Lock).
type parallel struct {
	slots map[int]*slot
}

// slot is one worktree tasks are worked on in.
type slot struct {
	id   int
	ck   *runbranch.Tree // its worktree, the checkpoint its task started from, its leftovers
	busy string          // the task worked on, "" when free
	out  io.Writer       // the progress output, its lines naming the slot
}

// laneFor is the lane an iteration works in, its own while it works: the
// working tree of slot s (nil: the run branch's), its checkpoints and its
// progress output; with [engine], its agent and guards run on a worker
// and their work is brought there (package remote).
func (r *Runner) laneFor(s *slot) lane.Lane {
	l := r.env.Local(r.env.Branch.Dir(), r.env.Branch.Main(), 0, r.opts.Progress)
	if s != nil {
		l = r.env.Local(s.ck.Repo().Top(), s.ck, s.id, s.out)
	}
	if r.engine != nil {
		return r.engine.Lane(l)
	}
	return l
}

// slotFor returns slot id, opening its worktree when the run has not yet
// (runbranch.Branch.Slot).
func (r *Runner) slotFor(ctx context.Context, id int) (*slot, error) {
	if s := r.par.slots[id]; s != nil {
		return s, nil
	}
	ck, err := r.env.Branch.Slot(ctx, r.cfg, id)
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
			path, err := r.env.Branch.SlotPath(id)
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

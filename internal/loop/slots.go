package loop

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/iteration"
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
	// integ makes integrations one at a time (integrate.go); taken
	// without the run's lock, which its holder gives up while guards run.
	integ sync.Mutex
	// landed is where the last landing of this run moved the run branch:
	// a reviewer working meanwhile in another slot finds the branch
	// there, moved by the runner, not by itself (holdwork.go).
	landed string
}

// slot is one worktree tasks are worked on in.
type slot struct {
	id   int
	ck   *checkpoints // its worktree, the checkpoint its task started from, its leftovers
	busy string       // the task worked on, "" when free
	out  io.Writer    // the progress output, its lines naming the slot
}

// lane is where one iteration works, its own while it works: the
// working tree (the run branch's, or a slot's worktree), its checkpoints
// (nil without git), its slot (0: none) and its progress output.
type lane struct {
	workDir string
	ck      *checkpoints
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
	return &worker{Runner: r, lane: lane{workDir: r.mainDir, ck: r.main, out: r.opts.Progress}}
}

// slotWorker works in slot s.
func (r *Runner) slotWorker(s *slot) *worker {
	return &worker{Runner: r, lane: lane{workDir: s.ck.repo.Top(), ck: s.ck, slot: s.id, out: s.out}}
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

// slotFor returns slot id, opening its worktree when the run has not yet:
// created beside the checkout (git.DefaultWorktreePath), detached at the
// run branch's checkpoint, with git.setup run once when it is created.
func (r *Runner) slotFor(ctx context.Context, id int) (*slot, error) {
	if s := r.par.slots[id]; s != nil {
		return s, nil
	}
	main := r.main
	path, err := r.slotPath(id)
	if err != nil {
		return nil, fmt.Errorf("slot %d: %w", id, err)
	}
	wt, created, err := main.repo.DetachedWorktree(ctx, path, main.head)
	if err != nil {
		return nil, fmt.Errorf("slot %d: the worktree at %s: %w", id, path, err)
	}
	if created {
		fmt.Fprintf(r.opts.Notices, "runner: slot %d works in the worktree %s\n", id, path)
	}
	log := filepath.Join(r.p.StateDir(), "setup-slot-"+strconv.Itoa(id)+".log")
	room, done := r.rooms.Setup(r.cfg, path, id)
	defer done()
	if ran, err := wt.RunSetup(ctx, r.cfg.Git.Setup, log, r.cfg.Git.SetupTimeout.Duration, room); err != nil {
		return nil, fmt.Errorf("git.setup in %s (its output is in %s): %w", path, r.p.Rel(log), err)
	} else if ran {
		fmt.Fprintf(r.opts.Notices, "runner: ran git.setup in slot %d's worktree (output in %s)\n", id, r.p.Rel(log))
	}
	head, err := wt.HeadCommit(ctx)
	if err != nil {
		return nil, fmt.Errorf("slot %d: %w", id, err)
	}
	ck := &checkpoints{repo: wt, branch: main.branch, head: head, runtime: main.runtime}
	changes, err := wt.Changes(ctx, ck.runtime)
	if err != nil {
		return nil, fmt.Errorf("slot %d: %w", id, err)
	}
	if len(changes) > 0 {
		ck.dirty = "?" // a previous run's attempt, kept under its attempt ref when it was recorded
	}
	s := &slot{id: id, ck: ck, out: &prefixWriter{w: r.opts.Progress, prefix: fmt.Sprintf("[slot %d] ", id)}}
	r.par.slots[id] = s
	return s, nil
}

// slotPath is where the worktree of slot id is.
func (r *Runner) slotPath(id int) (string, error) {
	return r.main.repo.DefaultWorktreePath(r.main.branch + "-slot-" + strconv.Itoa(id))
}

// startSlot plans how slot s gets to the run branch's checkpoint before
// task node, unless it holds the same task's last attempt, which the next
// one continues; whatever it held is kept under its attempt ref already.
// The slot's fields say at once where it will be; the move itself is
// returned (nil: none), for the slot's goroutine to make without the
// run's lock (slotWork): nobody else uses a busy slot's worktree. A slot
// known to be at its checkpoint, nothing changed since, moves by the
// paths that differ; one that is not, or has a change in the way, is
// reset as a whole.
func (r *Runner) startSlot(s *slot, node string) func(context.Context) error {
	ck := s.ck
	if ck.dirty == node && ck.head != "" {
		return nil
	}
	to := r.main.head
	known := ck.dirty == "" && !ck.leftovers
	if known && ck.head == to {
		return nil
	}
	repo, from, runtime, id := ck.repo, ck.head, ck.runtime, s.id
	ck.head, ck.dirty, ck.leftovers = to, "", false
	return func(ctx context.Context) error {
		if known {
			err := repo.MoveDetached(ctx, from, to)
			if err == nil || ctx.Err() != nil {
				return err
			}
		}
		if err := repo.StartDetachedAt(ctx, to, runtime); err != nil {
			return fmt.Errorf("slot %d: put its worktree at the checkpoint %s before task %s: %w", id, short(to), node, err)
		}
		return nil
	}
}

// tidySlots puts every free slot that holds what no task goes on from
// (dirty "?": a conflicted attempt, or what a previous run left, each
// kept under its attempt ref) at the run branch's checkpoint, so that a
// run does not end with a worktree holding changes. The slots of a
// previous run that this one did not use are looked at too, when their
// worktree is there. A slot holding a task's failed attempt is left for
// the next attempt to go on from, as the checkout is without slots.
// Nothing is done once the run is interrupted.
func (r *Runner) tidySlots(ctx context.Context) error {
	if ctx.Err() != nil {
		return nil
	}
	for id := 1; id <= config.MaxParallel; id++ {
		s := r.par.slots[id]
		if s == nil {
			path, err := r.slotPath(id)
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
		if s.busy != "" || s.ck.dirty != "?" && !s.ck.leftovers {
			continue
		}
		if err := s.ck.repo.StartDetachedAt(ctx, r.main.head, s.ck.runtime); err != nil {
			return fmt.Errorf("slot %d: put its worktree at the checkpoint %s: %w", s.id, short(r.main.head), err)
		}
		s.ck.head, s.ck.dirty, s.ck.leftovers = r.main.head, "", false
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

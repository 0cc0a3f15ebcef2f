package loop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/config"
	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/ratelimit"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/textfmt"
	"github.com/runner-cli/runner/internal/tree"
)

// The fallback chain (SPEC §17): [executor], then each [[fallback]]. An
// iteration runs on the first executor of the chain that is neither set
// aside nor waiting out a usage or rate limit; one that hits a limit
// hands the next iteration to the next free one at once, without an
// attempt spent, and the runner waits (ratelimit.go) only when every one
// is limited. One that cannot be started, or fails
// loop.max_consecutive_errors times in a row, is set aside for the rest
// of the run; the run stops only when none is left.

// errNoIteration ends an iteration that is set aside without an outcome
// for a reason the loop goes on from (another executor runs the next
// one), or a wait for an executor that a stop or a signal ended: the loop
// goes on at its boundary and does not count it as an iteration.
var errNoIteration = errors.New("the iteration was set aside")

// chain is what the run knows of each executor of the chain, in order.
type chain struct {
	links []*link
}

// link is one executor of the chain and what the run knows of it: its
// usage or rate limits, and whether it is set aside.
type link struct {
	exec config.Executor
	ratelimit.Limit

	// aside says why it is set aside for the rest of the run; "" when it
	// is not.
	aside      string
	asideSince time.Time
}

func (s *link) name() string { return s.exec.Label() }

// sync brings the chain in line with the configured executors (read
// again at every iteration boundary): executors are matched by name and
// keep what the run knows of them.
func (c *chain) sync(execs []config.Executor) {
	old := make(map[string]*link, len(c.links))
	for _, s := range c.links {
		old[s.name()] = s
	}
	links := make([]*link, 0, len(execs))
	for _, e := range execs {
		s := old[e.Label()]
		if s == nil {
			s = &link{}
		}
		s.exec = e
		links = append(links, s)
	}
	c.links = links
}

// pickFor returns the executor named rung (a ladder's rung, SPEC §24)
// when it may run at now, else the first that may (pick).
func (c *chain) pickFor(rung string, now time.Time) *link {
	if s := c.named(rung); s != nil && s.aside == "" && !s.Until.After(now) {
		return s
	}
	return c.pick(now)
}

// pick returns the first executor that may run at now, or nil.
func (c *chain) pick(now time.Time) *link {
	for _, s := range c.links {
		if s.aside == "" && !s.Until.After(now) {
			return s
		}
	}
	return nil
}

// earliest returns the executor not set aside whose limit is over first,
// or nil when every one is set aside.
func (c *chain) earliest() *link {
	var e *link
	for _, s := range c.links {
		if s.aside == "" && (e == nil || s.Until.Before(e.Until)) {
			e = s
		}
	}
	return e
}

// left counts the executors not set aside.
func (c *chain) left() int {
	n := 0
	for _, s := range c.links {
		if s.aside == "" {
			n++
		}
	}
	return n
}

// notes returns the executors set aside and those limited at now, for
// the run state (`runner status`).
func (c *chain) notes(now time.Time) (setAside, limited []state.ExecutorNote) {
	for _, s := range c.links {
		switch {
		case s.aside != "":
			setAside = append(setAside, state.ExecutorNote{Name: s.name(), Reason: s.aside, Since: s.asideSince.UTC()})
		case s.Until.After(now):
			until := s.Until.UTC()
			limited = append(limited, state.ExecutorNote{Name: s.name(), Reason: s.Why, Since: s.Since.UTC(), Until: &until})
		}
	}
	return setAside, limited
}

// noteExecutors hands the ledger what the run state says of the chain.
func (r *Runner) noteExecutors() {
	r.ledger.Executors(r.chain.notes(rateLimitClock()))
}

// chooseExecutor returns the executor the next iteration runs on: the
// executor named rung (the rung of its task's ladder; "" without one)
// when it is free, else the first of the chain that is. When every one
// is limited (a run that stopped while it waited, say), it waits until
// the first limit is over, within loop.max_wait; errNoIteration when a
// stop or a signal ended the wait, said on out. An error when no
// executor is left.
func (r *Runner) chooseExecutor(ctx context.Context, out io.Writer, rung string) (*link, error) {
	r.chain.sync(r.cfg.Chain())
	var waited time.Duration
	for {
		now := rateLimitClock()
		if s := r.chain.pickFor(rung, now); s != nil {
			r.ledger.UseExecutor(s.name())
			r.noteExecutors()
			return s, nil
		}
		e := r.chain.earliest()
		if e == nil {
			return nil, r.noneLeft(nil)
		}
		wait, ok, why := e.Wait(r.cfg.Loop, waited, now)
		if !ok {
			return nil, fmt.Errorf("%w: %s. Run again once the limit has lifted, or raise loop.max_wait", errRateLimitGaveUp, why)
		}
		r.noteExecutors()
		fmt.Fprintf(out, "every executor is limited: waiting %s (until %s) for %s: %s\n",
			ratelimit.Round(wait), time.Now().Add(wait).Format("15:04:05"), inert.Line(e.name()), inert.Line(e.Why))
		var slept ratelimit.End
		r.env.Lock.Outside(func() { slept = ratelimit.Sleep(ctx, wait, r.p.StopRequest()) })
		if slept != ratelimit.Slept {
			return nil, errNoIteration
		}
		waited += wait
		e.Until = time.Time{} // waited out
	}
}

// setAside sets s aside for the rest of the run, says so with the reason,
// and records it in the journal and the run state.
func (r *Runner) setAside(s *link, why string) error {
	s.aside, s.asideSince = why, rateLimitClock()
	next := "none is left"
	if n := r.chain.pick(rateLimitClock()); n != nil {
		next = "going on with " + n.name()
	} else if e := r.chain.earliest(); e != nil {
		next = "going on with " + e.name() + " once its limit is over"
	}
	fmt.Fprintf(r.opts.Notices, "runner: executor %s is set aside for the rest of the run: %s; %s\n",
		inert.Line(s.name()), inert.Line(firstLineOf(why)), inert.Line(next))
	r.log.Warn("executor set aside for the rest of the run", "executor", s.name(), "reason", firstLineOf(why))
	r.noteExecutors()
	return r.ledger.Journal(state.Record{Event: state.EventExecutorSetAside, Executor: s.name(), Error: why})
}

// noneLeft is the error that ends a run with no executor left to run on;
// last is the failure that set the last one aside (nil: known already).
func (r *Runner) noneLeft(last error) error {
	var aside []string
	for _, s := range r.chain.links {
		if s.aside != "" {
			aside = append(aside, s.name()+": "+firstLineOf(s.aside))
		}
	}
	msg := "no executor is left to run the agent: every one of [executor] and [[fallback]] is set aside (" + strings.Join(aside, "; ") +
		"). Fix them (`runner show` has the details), then run again"
	if last != nil {
		return fmt.Errorf("%s: %w", msg, last)
	}
	return errors.New(msg)
}

// startFailed ends an iteration whose executor could not be started
// (executor.StartError), or whose agent cannot work at all
// (executor.UnavailableError: its key refused, not logged in, an
// unknown model), without spending an attempt: the executor is
// set aside and, when another is left, the next iteration runs on it
// (errNoIteration). Any other failure, or one of the last executor, ends
// the run as before the chain existed.
func (r *Runner) startFailed(ctx context.Context, it *underway, cause error) error {
	var se *executor.StartError
	ue, unavailable := errors.AsType[*executor.UnavailableError](cause)
	if !errors.As(cause, &se) && !unavailable || ctx.Err() != nil || len(r.chain.links) < 2 {
		return r.abort(it.meta, cause)
	}
	why := "it cannot be started: " + cause.Error()
	if unavailable {
		why = "it cannot work: " + ue.Evidence
	}
	if err := r.setAside(it.link, why); err != nil {
		return errors.Join(cause, err)
	}
	if r.chain.left() == 0 {
		return r.abort(it.meta, r.noneLeft(cause))
	}
	note := fmt.Sprintf("executor %s could not be started (%s): it is set aside for the rest of the run and the next iteration runs on another; no attempt was spent",
		it.link.name(), firstLineOf(cause.Error()))
	if unavailable {
		note = fmt.Sprintf("executor %s cannot work (%s): it is set aside for the rest of the run and the next iteration runs on another; no attempt was spent",
			it.link.name(), firstLineOf(ue.Evidence))
	}
	if err := r.ledger.SetAside(it.meta, note, cause); err != nil {
		return errors.Join(cause, err)
	}
	return errNoIteration
}

// failedTooOften sets aside the executor of an iteration whose agent
// failed loop.max_consecutive_errors times in a row, when another is
// left, and reports whether it did; when none is left the run stops
// (tooManyFailures).
func (r *Runner) failedTooOften(meta *state.Meta, res *executor.Result) (bool, error) {
	limit := r.cfg.Loop.MaxConsecutiveErrors
	r.chain.sync(r.cfg.Chain()) // a resumed iteration comes before any choice
	s := r.chain.named(meta.Executor)
	if limit <= 0 || !res.AgentFailed || s == nil || len(r.chain.links) < 2 || r.ledger.State().ExecutorErrors[meta.Executor] < limit {
		return false, nil
	}
	why := fmt.Sprintf("its agent failed %d times in a row (loop.max_consecutive_errors = %d); the last time: %s",
		r.ledger.State().ExecutorErrors[meta.Executor], limit, firstLineOf(res.Error))
	if err := r.setAside(s, why); err != nil {
		return true, err
	}
	if r.chain.left() == 0 {
		return true, r.noneLeft(nil)
	}
	return true, nil
}

// named returns the executor of the chain named name, or nil.
func (c *chain) named(name string) *link {
	for _, s := range c.links {
		if s.name() == name {
			return s
		}
	}
	return nil
}

// tooManyFailures returns the error that stops the run when the agent
// failed loop.max_consecutive_errors times in a row, quoting what it
// printed the last time; nil otherwise. With fallbacks, the executor is
// set aside instead while another is left (failedTooOften).
func (r *Runner) tooManyFailures(meta *state.Meta, res *executor.Result) error {
	if aside, err := r.failedTooOften(meta, res); aside || err != nil {
		return err
	}
	limit := r.cfg.Loop.MaxConsecutiveErrors
	failures := r.ledger.State().ExecutorErrors[meta.Executor]
	if limit <= 0 || !res.AgentFailed || failures < limit {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "stopping: the agent failed %d times in a row (loop.max_consecutive_errors = %d), across tasks; the last time: %s",
		failures, limit, firstLineOf(res.Error))
	if res.Evidence != "" {
		fmt.Fprintf(&b, "; the agent printed: %q", textfmt.OneLine(res.Evidence, 400))
	}
	b.WriteString(". Check that the agent runs by hand in this repository (installed? logged in? its flags in executor.args?), then run again; `runner show` has the details")
	if meta.NodeStatus == string(tree.StatusBlocked) {
		fmt.Fprintf(&b, ". Task %s used up its attempts on this: `runner reset %s` reopens it", meta.NodePath, meta.Node)
	}
	return errors.New(b.String())
}

func firstLineOf(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSuffix(s, "; last lines of executor.log:")
}

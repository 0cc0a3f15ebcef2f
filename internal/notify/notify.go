// Package notify tells a person what a run needs from them while they
// are away: a task blocked on a question at 2 a.m., a run that is stuck,
// complete, out of budget, stopped on an error, or whose agent touched a
// file it may not. Each `[[notify]]` target of config.toml gets an HTTP
// POST whose body a chat webhook shows as text (Slack, Discord, ntfy, or
// any service that reads a Slack-style {"text": ...}).
//
// Sending never holds up the run: Send queues the message and returns;
// goroutines deliver it, one per target so that a dead service delays no
// other, each request with a timeout and a few retries with backoff. A
// message that cannot be delivered is a warning in the log, never an
// error of the run. Texts are scrubbed of secrets as prompts are, their
// control characters made visible, and bounded. Close delivers what is
// queued within a deadline when the run ends.
package notify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/scrub"
)

// Logger receives the warnings of undelivered notifications;
// *log.Logger of charmbracelet/log is one.
type Logger interface {
	Warn(msg any, keyvals ...any)
}

// timing is how hard delivery tries.
type timing struct {
	timeout    time.Duration // per request
	retries    int           // after the first try
	backoff    time.Duration // before the first retry; doubles after each
	maxBackoff time.Duration // the most a wait before a retry lasts, Retry-After included
	queue      int           // messages waiting per target; more are dropped
}

var defaultTiming = timing{timeout: 10 * time.Second, retries: 3, backoff: time.Second, maxBackoff: 30 * time.Second, queue: 32}

// Notifier sends notifications to the configured targets. Its methods
// are safe for concurrent use.
type Notifier struct {
	scrub  *scrub.Scrubber
	log    Logger
	timing timing
	client *http.Client

	workers []*worker
	// stop aborts requests and waits under way when Close runs out of time.
	ctx  context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu     sync.Mutex
	closed bool
}

// worker delivers one target's messages, in order.
type worker struct {
	target Target
	url    *url.URL
	format string
	queue  chan message
}

// New checks the targets and starts a goroutine per target. Texts are
// redacted by s (nil: not redacted); failures are logged to log (nil:
// not logged). With no targets, Send does nothing.
func New(targets []Target, s *scrub.Scrubber, log Logger) (*Notifier, error) {
	return newNotifier(targets, s, log, defaultTiming)
}

func newNotifier(targets []Target, s *scrub.Scrubber, log Logger, tm timing) (*Notifier, error) {
	n := &Notifier{scrub: s, log: log, timing: tm}
	n.client = &http.Client{
		// A webhook that redirects is refused rather than followed: the
		// body would go to another address than the one configured.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	for _, t := range targets {
		if err := t.Validate(); err != nil {
			return nil, err
		}
		u, _ := url.Parse(t.URL)
		n.workers = append(n.workers, &worker{target: t, url: u, format: t.format(), queue: make(chan message, tm.queue)})
	}
	n.ctx, n.stop = context.WithCancel(context.Background())
	for _, w := range n.workers {
		n.wg.Add(1)
		go n.run(w)
	}
	return n, nil
}

// Send queues a notification of ev saying text to every target that
// wants ev, and returns at once. A target whose queue is full drops it,
// with a warning. After Close, Send does nothing.
func (n *Notifier) Send(ev Event, text string) {
	if n == nil || !slices.ContainsFunc(n.workers, func(w *worker) bool { return w.target.Wants(ev) }) {
		return
	}
	m := message{event: ev, text: n.prepare(text), at: time.Now()}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return
	}
	for _, w := range n.workers {
		if !w.target.Wants(ev) {
			continue
		}
		select {
		case w.queue <- m:
		default:
			n.warn("notification dropped: too many are waiting", w, ev, fmt.Errorf("%d queued", cap(w.queue)))
		}
	}
}

// prepare makes text fit to send: bounded before and after redaction (a
// huge text costs the scrubber time), secrets redacted, control
// characters written visibly.
func (n *Notifier) prepare(text string) string {
	text = cut(text, 4*maxText)
	if n.scrub != nil {
		text, _ = n.scrub.Redact(text)
	}
	return cut(inert.Text(text), maxText-len("runner: ")-64)
}

// Close stops taking notifications and waits until the queued ones are
// delivered or given up, or ctx ends; then requests under way are
// aborted and what is left is dropped, with a warning.
func (n *Notifier) Close(ctx context.Context) {
	if n == nil {
		return
	}
	n.mu.Lock()
	if !n.closed {
		n.closed = true
		for _, w := range n.workers {
			close(w.queue)
		}
	}
	n.mu.Unlock()
	done := make(chan struct{})
	go func() {
		n.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		n.stop()
		<-done
	}
	n.stop()
}

// run delivers w's messages until its queue is closed and empty, or the
// notifier is stopped (the rest is then dropped).
func (n *Notifier) run(w *worker) {
	defer n.wg.Done()
	for m := range w.queue {
		if n.ctx.Err() != nil {
			n.warn("notification dropped: the run ended before it was sent", w, m.event, n.ctx.Err())
			continue
		}
		if tries, err := n.deliver(w, m); err != nil {
			n.warn(fmt.Sprintf("notification not delivered after %d tries", tries), w, m.event, err)
		}
	}
}

// deliver posts m to w's target, retrying a failed request that may
// succeed later (no answer, a 5xx, a 429) after a growing wait. It
// returns how many requests it made and the last failure.
func (n *Notifier) deliver(w *worker, m message) (int, error) {
	wait := n.timing.backoff
	for try := 1; ; try++ {
		retry, after, err := n.post(w, m)
		if err == nil || !retry || try > n.timing.retries {
			return try, err
		}
		if after > 0 {
			wait = after
		}
		wait = min(wait, n.timing.maxBackoff)
		select {
		case <-n.ctx.Done():
			return try, fmt.Errorf("%w; the run ended before the next try", err)
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// post makes one request. retry says whether the failure is worth
// another try, after the wait the service asked for, if any.
func (n *Notifier) post(w *worker, m message) (retry bool, after time.Duration, err error) {
	ctx, cancel := context.WithTimeout(n.ctx, n.timing.timeout)
	defer cancel()
	req, err := request(ctx, w.format, w.url, m)
	if err != nil {
		return false, 0, err
	}
	resp, err := n.client.Do(req)
	if err != nil {
		// The error quotes the URL, which holds the webhook's secret.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return true, 0, err
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return false, 0, nil
	}
	err = fmt.Errorf("%s: %s", resp.Status, cut(inert.Line(string(snippet)), 200))
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		if s, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && s > 0 {
			after = time.Duration(s) * time.Second
		}
		return true, after, err
	case resp.StatusCode == http.StatusRequestTimeout:
		return true, 0, err
	}
	return false, 0, err
}

func (n *Notifier) warn(msg string, w *worker, ev Event, err error) {
	if n.log != nil {
		n.log.Warn(msg, "event", string(ev), "url", Redact(w.target.URL), "err", err)
	}
}

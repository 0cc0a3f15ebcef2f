// Package webhooks is what a run tells its [[notify]] targets (SPEC §21),
// and when: a task blocked, a usage or rate limit waited out, an agent
// that changed its judges, the run's end. It builds each message from the
// run's records and hands it to a notifier (package notify) for the
// config in force: queued, sent in the background, never slowing an
// iteration.
//
// It owns the notifiers only. It reads the records it is given and must
// not touch the ledger, the tree, the run branch or any file of the run.
package webhooks

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"time"

	"github.com/charmbracelet/log"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/notify"
	"github.com/runner-cli/runner/internal/scrub"
)

// Hooks are the `[[notify]]` targets of the config in force, and the
// notifier sending to them. The config is read again at every boundary:
// a notifier whose targets or scrubber changed is replaced, the old one
// delivering what it holds meanwhile.
type Hooks struct {
	cfg      func() *config.Config
	scrubber func(*config.Config) (*scrub.Scrubber, error)
	log      *log.Logger
	repo     string        // the repository's name, which every text starts with
	wait     time.Duration // the most Close waits for what is queued

	n       *notify.Notifier
	targets []notify.Target
	built   *scrub.Scrubber
	closing sync.WaitGroup // replaced notifiers, delivering what they hold
}

// New returns the hooks of the repository at root: cfg is the config in
// force (nil: none yet), scrubber the secret scrubber built for a config,
// and closeWait the most Close waits for the queued notifications.
func New(root string, cfg func() *config.Config, scrubber func(*config.Config) (*scrub.Scrubber, error), l *log.Logger, closeWait time.Duration) *Hooks {
	return &Hooks{cfg: cfg, scrubber: scrubber, log: l, repo: filepath.Base(root), wait: closeWait}
}

// Send sends a notification of ev saying text to the configured webhooks
// that want it, and returns at once. text is scrubbed of secrets with
// the prompt's rules (the agent's words can hold what its prompt did),
// made inert and bounded by package notify. The repository is named by
// the notification itself: text need not say which.
func (h *Hooks) Send(ev notify.Event, text string) {
	if h == nil {
		return
	}
	cfg := h.cfg()
	if cfg == nil || len(cfg.Notify) == 0 {
		return
	}
	n := h.notifier(cfg)
	if n == nil {
		return
	}
	n.Send(ev, fmt.Sprintf("%s: %s", h.repo, text))
}

// notifier returns the notifier for cfg, building it when the targets or
// the scrubber changed; nil when it cannot be built (warned): nothing is
// sent unscrubbed.
func (h *Hooks) notifier(cfg *config.Config) *notify.Notifier {
	s, err := h.scrubber(cfg)
	if err != nil {
		h.log.Warn("notifications are not sent: the secret scrubber cannot be built", "err", err)
		return nil
	}
	if h.n != nil && h.built == s && reflect.DeepEqual(h.targets, cfg.Notify) {
		return h.n
	}
	n, err := notify.New(cfg.Notify, s, h.log)
	if err != nil {
		// config.Load checked the targets: this is not expected.
		h.log.Warn("notifications are not sent", "err", err)
		return nil
	}
	if old := h.n; old != nil {
		h.closing.Add(1)
		go func() {
			defer h.closing.Done()
			ctx, cancel := context.WithTimeout(context.Background(), h.wait)
			defer cancel()
			old.Close(ctx)
		}()
	}
	h.n, h.targets, h.built = n, cfg.Notify, s
	return n
}

// Close lets the queued notifications go out, for at most the wait New
// was given, when the run ends.
func (h *Hooks) Close() {
	if h == nil {
		return
	}
	if h.n != nil {
		ctx, cancel := context.WithTimeout(context.Background(), h.wait)
		defer cancel()
		h.n.Close(ctx)
	}
	h.closing.Wait()
}

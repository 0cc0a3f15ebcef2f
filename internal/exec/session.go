package executor

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/runner-cli/runner/internal/state"
)

// sessionPoll is how often the session log of a codex agent at work is
// read for its usage when no change was notified (inotify, below).
const sessionPoll = 200 * time.Millisecond

// sessionReadMax bounds what one look reads of the session log; the rest
// is read at the next.
const sessionReadMax = 8 << 20

// sessionWatch follows the session log codex keeps in its state
// directory (CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl, one JSON
// event a line) while the agent works, and hands the running total of
// each token_count event to live. The directory is the run's own (home.go)
// and the agent can write there: the log is only ever read, as a regular
// file, never through a link, and what it says only ever stops the agent
// (the usage booked is codex's own turn.completed when it ends).
type sessionWatch struct {
	dir  string // CODEX_HOME/sessions
	live *liveUsage

	path  string // the log followed, once found
	off   int64
	split lineSplitter

	stop chan struct{}
	done sync.WaitGroup
}

// watchSession starts following the session log of a codex run whose
// state directory is home; the returned function stops it after a last
// look, once the agent is gone. The log is read as soon as the kernel
// says it changed (codex writes its token_count right after a model
// response, and runs the response's tool call before asking for the
// next: the agent is stopped before that request, as a rule), and on a
// timer besides, where inotify is not available or missed a folder.
func watchSession(home string, live *liveUsage) func() {
	w := &sessionWatch{dir: filepath.Join(home, "sessions"), live: live, stop: make(chan struct{})}
	w.split = lineSplitter{max: StreamLineMax, fn: func(line []byte, _ int64) { w.line(line) }}
	changed := newTreeNotify(home)
	w.done.Add(1)
	go func() {
		defer w.done.Done()
		defer changed.close()
		t := time.NewTicker(sessionPoll)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
			case <-changed.c:
			}
			w.look()
		}
	}()
	return func() {
		close(w.stop)
		w.done.Wait()
		w.look()
	}
}

// look reads what the log got since the last look.
func (w *sessionWatch) look() {
	if w.path == "" {
		w.path = findRollout(w.dir)
		if w.path == "" {
			return
		}
	}
	f, err := os.OpenFile(w.path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() <= w.off {
		return
	}
	n, _ := io.Copy(&w.split, io.NewSectionReader(f, w.off, min(st.Size()-w.off, sessionReadMax)))
	w.off += n
}

// findRollout returns the session log below dir: the first rollout-*.jsonl
// in name order (codex names it by its start time); "" when there is none
// yet. Links are not followed.
func findRollout(dir string) string {
	var found string
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return err
			}
			return nil
		}
		if d.Type().IsRegular() && strings.HasPrefix(d.Name(), "rollout-") && strings.HasSuffix(d.Name(), ".jsonl") {
			found = path // WalkDir goes in lexical order
			return fs.SkipAll
		}
		return nil
	})
	return found
}

// line reads one line of the session log: a token_count event's running
// total.
func (w *sessionWatch) line(line []byte) {
	if !bytes.Contains(line, []byte(`"token_count"`)) {
		return
	}
	var ev struct {
		Type    string `json:"type"`
		Payload struct {
			Type string `json:"type"`
			Info *struct {
				Total *codexUsage `json:"total_token_usage"`
			} `json:"info"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &ev, lenient...) != nil || ev.Type != "event_msg" || ev.Payload.Type != "token_count" ||
		ev.Payload.Info == nil || ev.Payload.Info.Total == nil {
		return
	}
	t := ev.Payload.Info.Total
	w.live.codexTotal(state.Usage{InputTokens: t.InputTokens, CachedInputTokens: min(t.CachedInputTokens, t.InputTokens), OutputTokens: t.OutputTokens})
}

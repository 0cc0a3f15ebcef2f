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

// sessionFilesMax bounds the session logs one run's watcher keeps open.
const sessionFilesMax = 16

// sessionWatch follows the session log codex keeps in its state
// directory (CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl, one JSON
// event a line) while the agent works, and hands the running total of
// each token_count event to live. The directory is the run's own (home.go)
// and the agent's commands can write there too, so nothing they could
// write there lowers what is read: every rollout file found is followed
// by its inode, kept open (a log unlinked or replaced by another file of
// its name is still read where codex writes it; one truncated is read
// again from its start), running totals only ever rise (liveUsage), and
// the logs are only ever read, as regular files, never through a link.
// What they say only ever stops the agent: the usage booked is codex's
// own turn.completed when it ends.
type sessionWatch struct {
	dir   string // CODEX_HOME/sessions
	live  *liveUsage
	files map[fileID]*sessionFile

	stop chan struct{}
	done sync.WaitGroup
}

// fileID is a file's device and inode.
type fileID struct{ dev, ino uint64 }

// sessionFile is one session log followed: open, and read up to off.
type sessionFile struct {
	f     *os.File
	off   int64
	split lineSplitter
}

// watchSession starts following the session log of a codex run whose
// state directory is home; the returned function stops it after a last
// look, once the agent is gone. The log is read as soon as the kernel
// says it changed (codex writes its token_count right after a model
// response, and runs the response's tool call before asking for the
// next: the agent is stopped before that request, as a rule), and on a
// timer besides, where inotify is not available or missed a folder.
func watchSession(home string, live *liveUsage) func() {
	w := &sessionWatch{dir: filepath.Join(home, "sessions"), live: live, files: map[fileID]*sessionFile{}, stop: make(chan struct{})}
	changed := newTreeNotify(home)
	w.done.Add(1)
	go func() {
		defer w.done.Done()
		defer changed.close()
		t := time.NewTicker(sessionPoll)
		defer t.Stop()
		for {
			find := true
			select {
			case <-w.stop:
				return
			case <-t.C:
			case <-changed.c:
				// Codex writes its log often: a change reads the logs
				// followed, and looks for new ones only until the first
				// is found (the timer looks for others).
				find = len(w.files) == 0
			}
			w.look(find)
		}
	}()
	return func() {
		close(w.stop)
		w.done.Wait()
		w.look(true)
		for _, sf := range w.files {
			sf.f.Close()
		}
	}
}

// look opens the session logs not followed yet, with find, and reads
// what each got since the last look.
func (w *sessionWatch) look(find bool) {
	if find {
		for _, path := range findRollouts(w.dir) {
			if len(w.files) >= sessionFilesMax {
				break
			}
			w.follow(path)
		}
	}
	for _, sf := range w.files {
		st, err := sf.f.Stat()
		if err != nil {
			continue
		}
		if st.Size() < sf.off { // truncated: read again from its start
			sf.off = 0
			sf.split = w.splitter()
		}
		if st.Size() == sf.off {
			continue
		}
		n, _ := io.Copy(&sf.split, io.NewSectionReader(sf.f, sf.off, min(st.Size()-sf.off, sessionReadMax)))
		sf.off += n
	}
}

// follow opens the session log at path, unless its inode is followed
// already.
func (w *sessionWatch) follow(path string) {
	if st, err := os.Lstat(path); err != nil || !st.Mode().IsRegular() || w.files[idOf(st)] != nil {
		return
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || w.files[idOf(st)] != nil {
		f.Close()
		return
	}
	w.files[idOf(st)] = &sessionFile{f: f, split: w.splitter()}
}

func (w *sessionWatch) splitter() lineSplitter {
	return lineSplitter{max: StreamLineMax, fn: func(line []byte, _ int64) { w.line(line) }}
}

// idOf is the device and inode of the file st describes.
func idOf(st fs.FileInfo) fileID {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return fileID{uint64(s.Dev), uint64(s.Ino)}
	}
	return fileID{}
}

// findRollouts returns the session logs below dir (rollout-*.jsonl, in
// name order: codex names them by their start time). Links are not
// followed.
func findRollouts(dir string) []string {
	var found []string
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return err
			}
			return nil
		}
		if d.Type().IsRegular() && strings.HasPrefix(d.Name(), "rollout-") && strings.HasSuffix(d.Name(), ".jsonl") {
			found = append(found, path)
			if len(found) == sessionFilesMax {
				return fs.SkipAll
			}
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

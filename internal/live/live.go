// Package live shows a night as it happens, on a terminal: below the
// lines `runner run` prints, a status area with one line per iteration
// under way (its slot, task, elapsed time and the agent's latest event,
// read from the events its CLI streams), redrawn in place every second.
// Everything else the run prints goes through Board.Writer, which clears
// the area, writes, and draws it again, so the two never mix. When the
// output is not a terminal there is no area and no escape sequence: the
// run prints plain lines only. Colour follows NO_COLOR: the area is
// dimmed, and the line that says what came of an iteration (Line) is
// painted by its outcome (Paint, ToneOf).
package live

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/runner-cli/runner/internal/inert"
)

// Interval is how often the area is drawn again.
const Interval = time.Second

// Board is the status area of a run on a terminal. Its methods are safe
// for concurrent use; a nil *Board does nothing.
type Board struct {
	mu    sync.Mutex
	out   io.Writer
	color bool
	drawn int // lines of the area on the screen now
	runs  map[int]*run
	now   func() time.Time
	width int
}

type run struct {
	n       int
	slot    int
	task    string
	started time.Time
	events  string // the run folder's events.jsonl ("" for none)
}

// ForTerminal returns a Board drawing on f when f is a terminal, nil
// otherwise (a pipe, a file: plain lines only). Colour is used unless
// NO_COLOR is set to anything but "" (no-color.org) or TERM is "dumb".
func ForTerminal(f *os.File) *Board {
	if f == nil || !isatty.IsTerminal(f.Fd()) {
		return nil
	}
	return New(f, os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb")
}

// Tone is what a line the run prints says of an iteration, for its
// colour on a terminal (Paint).
type Tone int

// The tones.
const (
	Plain     Tone = iota // no colour
	Good                  // done: green
	Bad                   // failed, a conflict: red
	Attention             // blocked, a question: yellow
)

// sgr are the escape sequences that start the tones' colours.
var sgr = map[Tone]string{Good: "\x1b[32m", Bad: "\x1b[31m", Attention: "\x1b[33m"}

// Paint is line (one line, without its newline) in tone's colour when b
// draws in colour; line itself otherwise: no Board (not a terminal),
// NO_COLOR, TERM=dumb, or the Plain tone.
func (b *Board) Paint(tone Tone, line string) string {
	if b == nil || !b.color || sgr[tone] == "" {
		return line
	}
	return sgr[tone] + line + "\x1b[0m"
}

// New returns a Board drawing on out.
func New(out io.Writer, color bool) *Board {
	return &Board{out: out, color: color, runs: map[int]*run{}, now: time.Now, width: 120}
}

// Started adds iteration n, on task (its path) in slot (0 without
// slots), whose agent streams its events to eventsFile ("" when it
// streams none).
func (b *Board) Started(n, slot int, task, eventsFile string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.runs[n] = &run{n: n, slot: slot, task: task, started: b.now(), events: eventsFile}
	b.redraw()
}

// Ended removes iteration n.
func (b *Board) Ended(n int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.runs[n]; ok {
		delete(b.runs, n)
		b.redraw()
	}
}

// Run draws the area every Interval until stop is closed, then clears it.
func (b *Board) Run(stop <-chan struct{}) {
	if b == nil {
		return
	}
	t := time.NewTicker(Interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			b.mu.Lock()
			b.clear()
			b.mu.Unlock()
			return
		case <-t.C:
			b.mu.Lock()
			b.redraw()
			b.mu.Unlock()
		}
	}
}

// Writer returns a writer for what the run prints to the same terminal
// (its progress lines, its notices): the area is cleared before, and
// drawn again after, each write. With a nil Board it is w itself.
func (b *Board) Writer(w io.Writer) io.Writer {
	if b == nil {
		return w
	}
	return &through{b: b, w: w}
}

type through struct {
	b *Board
	w io.Writer
}

func (t *through) Write(p []byte) (int, error) {
	t.b.mu.Lock()
	defer t.b.mu.Unlock()
	t.b.clear()
	n, err := t.w.Write(p)
	t.b.redraw()
	return n, err
}

// clear erases the area: up over its lines, each cleared.
func (b *Board) clear() {
	if b.drawn == 0 {
		return
	}
	var s strings.Builder
	for range b.drawn {
		s.WriteString("\x1b[1A\x1b[2K") // up one line, erase it
	}
	s.WriteString("\r")
	io.WriteString(b.out, s.String())
	b.drawn = 0
}

// redraw draws the area again: one line per iteration under way, in
// slot order.
func (b *Board) redraw() {
	b.clear()
	if len(b.runs) == 0 {
		return
	}
	list := make([]*run, 0, len(b.runs))
	for _, r := range b.runs {
		list = append(list, r)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].slot != list[j].slot {
			return list[i].slot < list[j].slot
		}
		return list[i].n < list[j].n
	})
	var s strings.Builder
	for _, r := range list {
		s.WriteString(b.line(r))
		s.WriteString("\n")
	}
	io.WriteString(b.out, s.String())
	b.drawn = len(list)
}

// line is one iteration's line of the area, at most b.width runes.
func (b *Board) line(r *run) string {
	where := ""
	if r.slot > 0 {
		where = fmt.Sprintf("[slot %d] ", r.slot)
	}
	elapsed := b.now().Sub(r.started).Round(time.Second)
	event := LatestEvent(r.events)
	if event == "" {
		event = "working"
	}
	text := fmt.Sprintf("%s#%d %s  %s  %s", where, r.n, r.task, elapsed, event)
	text = fit(text, b.width)
	if b.color {
		return "\x1b[2m" + "… " + "\x1b[0m" + text
	}
	return "… " + text
}

// fit cuts s to at most n runes, ending in "…" when cut, on one line
// with nothing a terminal would act on (inert.Line).
func fit(s string, n int) string {
	runes := []rune(inert.Line(s))
	if len(runes) <= n {
		return s
	}
	return string(runes[:n-1]) + "…"
}

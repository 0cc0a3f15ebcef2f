package live

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBoardDrawsAroundWrites: the area shows each iteration under way
// with its elapsed time and latest event; a line the run prints clears
// it first and draws it again after; an ended iteration leaves it.
func TestBoardDrawsAroundWrites(t *testing.T) {
	var out bytes.Buffer
	b := New(&out, false)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b.now = func() time.Time { return now }
	events := filepath.Join(t.TempDir(), "events.jsonl")
	os.WriteFile(events, []byte(`{"type":"item.started","item":{"type":"command_execution","command":"go test ./..."}}`+"\n"), 0o644)

	b.Started(4, 2, "app/a", events)
	now = now.Add(72 * time.Second)
	b.mu.Lock()
	b.redraw()
	b.mu.Unlock()
	if got := out.String(); !strings.Contains(got, "… [slot 2] #4 app/a  1m12s  running go test ./...\n") {
		t.Fatalf("area %q", got)
	}
	out.Reset()
	b.Writer(&out).Write([]byte("#3 app/b done\n"))
	want := "\x1b[1A\x1b[2K\r#3 app/b done\n… [slot 2] #4 app/a  1m12s  running go test ./...\n"
	if got := out.String(); got != want {
		t.Fatalf("a write through the board: %q\nwant %q", got, want)
	}
	out.Reset()
	b.Ended(4)
	if got := out.String(); got != "\x1b[1A\x1b[2K\r" {
		t.Fatalf("after the end: %q", got)
	}
	var nilBoard *Board
	if w := nilBoard.Writer(&out); w != &out {
		t.Error("a nil board's writer is not the writer itself")
	}
	nilBoard.Started(1, 0, "x", "")
}

// TestLatestEvent reads codex items and claude tool uses, the last
// known one winning, and says nothing of an unknown stream.
func TestLatestEvent(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ lines, want string }{
		{`{"type":"item.completed","item":{"type":"file_change","changes":[{"path":"calc.go"}]}}` + "\n" + `{"type":"turn.started"}`, "editing calc.go"},
		{`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"pytest -q"}}]}}`, "running pytest -q"},
		{`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Edit","input":{"file_path":"a.py"}}]}}`, "edit a.py"},
		{`not json` + "\n" + `{"type":"thread.started"}`, ""},
	} {
		path := filepath.Join(dir, "events.jsonl")
		os.WriteFile(path, []byte(tt.lines+"\n"), 0o644)
		if got := LatestEvent(path); got != tt.want {
			t.Errorf("LatestEvent of %q = %q, want %q", tt.lines, got, tt.want)
		}
	}
	if got := LatestEvent(filepath.Join(dir, "none")); got != "" {
		t.Errorf("no file: %q", got)
	}
}

// TestPaint: a Board in colour paints a line by its tone, and resets the
// colour at its end; without colour, without a Board, or in the Plain
// tone the line is left as it is.
func TestPaint(t *testing.T) {
	b := New(&bytes.Buffer{}, true)
	for tone, want := range map[Tone]string{
		Good:      "\x1b[32m#1 a → done\x1b[0m",
		Bad:       "\x1b[31m#1 a → done\x1b[0m",
		Attention: "\x1b[33m#1 a → done\x1b[0m",
		Plain:     "#1 a → done",
	} {
		if got := b.Paint(tone, "#1 a → done"); got != want {
			t.Errorf("Paint(%d) = %q, want %q", tone, got, want)
		}
	}
	var none *Board
	for _, b := range []*Board{New(&bytes.Buffer{}, false), none} {
		if got := b.Paint(Good, "#1 a → done"); got != "#1 a → done" {
			t.Errorf("Paint without colour = %q", got)
		}
	}
}

package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/runner-cli/runner/e2e"
)

// TestLiveProgressOnATerminal runs `runner run` on a pseudo-terminal: a
// line says when the iteration's agent starts, and while it works a
// status area below shows the task and its elapsed time, drawn again in
// place (cursor up, line erased) around every line the run prints. The
// agent waits until the test has seen the area, so nothing depends on
// how fast the machine is. In colour the area is dimmed and the line that
// says what came of the iteration is painted by its outcome (done:
// green); with NO_COLOR, the same without any colour. Piped, the same
// run prints no escape sequence (the scenarios check their output is
// plain: see live_piped.txt).
func TestLiveProgressOnATerminal(t *testing.T) {
	t.Run("colour", func(t *testing.T) {
		got := runOnTerminal(t, map[string]string{"NO_COLOR": "", "TERM": "xterm-256color"})
		for _, want := range []string{"\x1b[2m… \x1b[0m#1 job/only  ", "\x1b[32m#1 job/only "} {
			if !strings.Contains(got, want) {
				t.Errorf("the terminal does not show %q:\n%q", want, got)
			}
		}
		if i := strings.Index(got, "\x1b[32m#1 job/only "); i >= 0 {
			if line, _, _ := strings.Cut(got[i:], "\n"); !strings.Contains(line, "→ done") || !strings.HasSuffix(strings.TrimSuffix(line, "\r"), "\x1b[0m") {
				t.Errorf("the iteration's line is not green from its start to its end: %q", line)
			}
		}
	})
	t.Run("NO_COLOR", func(t *testing.T) {
		got := runOnTerminal(t, map[string]string{"NO_COLOR": "1", "TERM": "xterm-256color"})
		for _, color := range []string{"\x1b[2m", "\x1b[0m", "\x1b[31m", "\x1b[32m", "\x1b[33m"} {
			if strings.Contains(got, color) {
				t.Errorf("with NO_COLOR the terminal shows the colour %q:\n%q", color, got)
			}
		}
	})
}

// runOnTerminal runs `runner run` of one task on a pseudo-terminal, with
// env's variables set in its environment ("" unsets one), and returns
// what the terminal showed, after checking the start line, the live area
// drawn and cleared, and the iteration's line.
func runOnTerminal(t *testing.T, env map[string]string) string {
	dir := t.TempDir()
	release := filepath.Join(dir, "release")
	r := e2e.FakeAgentRepo(t, e2e.OneTask, fmt.Sprintf(`{"default": {"wait_file": %q, "write": [{"path": "done.txt", "content": "x\n"}],
		"message": {"status": "done", "summary": "done"}}}`, release), "")
	cmd, _ := r.RunnerCmd(nil, "run")
	cmd.Stdout, cmd.Stderr = nil, nil
	cmd.Env = slices.DeleteFunc(cmd.Env, func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		_, set := env[k]
		return set
	})
	for k, v := range env {
		if v != "" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer tty.Close()
	var out e2e.SyncBuffer
	copied := make(chan struct{})
	go func() { io.Copy(&out, tty); close(copied) }()

	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(out.String(), "… #1 job/only  ") && !strings.Contains(out.String(), "… \x1b[0m#1 job/only  ") {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no live area within a minute; the terminal shows:\n%q", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("runner run: %v\n%q", err, out.String())
	}
	<-copied
	got := out.String()
	for _, want := range []string{"#1 job/only", "started: attempt 1 of 5, on command", "#1 job/only  ", "\x1b[1A\x1b[2K", "→ done"} {
		if !strings.Contains(got, want) {
			t.Errorf("the terminal does not show %q:\n%q", want, got)
		}
	}
	// The area is gone at the end: the last line drawn is the run's own.
	if last := got[strings.LastIndex(got, "… "):]; !strings.Contains(last, "\x1b[1A\x1b[2K") {
		t.Errorf("the area was not cleared after the iteration:\n%q", last)
	}
	return got
}

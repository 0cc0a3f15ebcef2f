package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/state"
)

// Bounds of the events.jsonl summary `runner show` prints.
const (
	shownCommands = 10
	shownFiles    = 20
)

// printEventSummary writes the events.jsonl summary lines of `runner show`.
func printEventSummary(w io.Writer, p state.Paths, runDir string) {
	s := executor.SummarizeEvents(filepath.Join(runDir, executor.EventsFileName))
	if s == nil {
		return
	}
	kind := ""
	if s.Kind != "" {
		kind = ", " + s.Kind
	}
	fmt.Fprintf(w, "events:   %d in %s%s\n", s.Events, executor.EventsFileName, kind)
	if len(s.Commands) > 0 {
		var parts []string
		for i, c := range s.Commands {
			if i == shownCommands {
				parts = append(parts, fmt.Sprintf("… and %d more", len(s.Commands)-i))
				break
			}
			part := oneLineCut(c.Command, 80)
			if c.Exit != "" {
				part += " (" + inert.Line(c.Exit) + ")"
			}
			parts = append(parts, part)
		}
		fmt.Fprintf(w, "commands: %d run: %s\n", len(s.Commands), strings.Join(parts, "; "))
	}
	if len(s.Files) > 0 {
		files := make([]string, len(s.Files))
		for i, f := range s.Files {
			files[i] = f
			if filepath.IsAbs(f) {
				files[i] = rel(p, f)
			}
		}
		more := ""
		if len(files) > shownFiles {
			more = fmt.Sprintf(", … and %d more", len(files)-shownFiles)
			files = files[:shownFiles]
		}
		fmt.Fprintf(w, "changed:  %d files: %s%s\n", len(s.Files), strings.Join(inert.Lines(files), ", "), more)
	}
	for _, e := range s.Errors {
		fmt.Fprintf(w, "event:    %s\n", oneLineCut(e, 200))
	}
	if s.Cut != "" {
		fmt.Fprintf(w, "events:   %s\n", inert.Line(s.Cut))
	}
}

// oneLineCut folds s onto one line (runs of spaces, tabs and newlines
// become one space), escapes the control characters left, and cuts the
// result to about n bytes.
func oneLineCut(s string, n int) string {
	s = inert.Line(strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' }), " "))
	if len(s) > n {
		cut := n
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

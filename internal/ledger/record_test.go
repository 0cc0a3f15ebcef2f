package ledger

import (
	"os"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/state"
)

// TestAppendNotesOnceTornLine checks what a runner recording an iteration
// again does with the notes its killed predecessor appended: complete
// lines are not repeated, a line torn just before its newline is cut and
// written again in full (not completed into a duplicate), and a person's
// last line without a newline is kept.
func TestAppendNotesOnceTornLine(t *testing.T) {
	line := func(n int, item string) string { return state.NoteLines(n, "a", []string{item})[0] }
	cases := []struct {
		name, before, want string
	}{
		{"torn before its newline",
			"# Assumptions\n\n" + line(1, "x") + strings.TrimSuffix(line(2, "one"), "\n"),
			"# Assumptions\n\n" + line(1, "x") + line(2, "one") + line(2, "two")},
		{"torn inside",
			"# Assumptions\n\n" + line(2, "one")[:10],
			"# Assumptions\n\n" + line(2, "one") + line(2, "two")},
		{"first line complete",
			"# Assumptions\n\n" + line(2, "one"),
			"# Assumptions\n\n" + line(2, "one") + line(2, "two")},
		{"a person's line",
			"# Assumptions\n\nwritten by hand",
			"# Assumptions\n\nwritten by hand\n" + line(2, "one") + line(2, "two")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := state.NewPaths(t.TempDir())
			if err := os.MkdirAll(p.StateDir(), 0o755); err != nil {
				t.Fatal(err)
			}
			write(t, p.Assumptions(), c.before)
			l := &Ledger{p: p, resuming: true}
			meta := &state.Meta{Iteration: 2, Node: "a"}
			if err := l.notesOnce(p.Assumptions(), "Assumptions", meta, []string{"one", "two"}); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(p.Assumptions())
			if string(got) != c.want {
				t.Errorf("assumptions.md =\n%q\nwant\n%q", got, c.want)
			}
		})
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

package iteration

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/guard"
)

// Bounds on the tests failure.log names, and on each one's message: the
// agent reads failure.md, made of failure.log's head.
const (
	maxTestsNamed   = 20
	maxMessageLines = 12
	maxMessageBytes = 1 << 10
	maxTestsBlock   = 16 << 10
)

// testLines are the failing tests of one guard or check, with the head
// of each one's message, for the top of failure.log.
type testLines struct {
	guard     string
	check     bool
	regressed bool // they passed on the baseline
	names     []string
	messages  []string
	more      int
}

// fail notes the failing tests of res: only names when given, else every
// failing test of its report.
func (l *testLines) fail(res guard.Result, names []string) {
	if res.Report == nil {
		return
	}
	if names == nil {
		names = res.Report.Failed()
	}
	for i, name := range names {
		if i == maxTestsNamed {
			l.more = len(names) - i
			break
		}
		t, _ := res.Report.Lookup(name)
		l.names = append(l.names, name)
		l.messages = append(l.messages, head(t.Message))
	}
}

// head is the first lines of a message, within bounds.
func head(msg string) string {
	msg = strings.TrimSpace(msg)
	lines := strings.Split(msg, "\n")
	if len(lines) > maxMessageLines {
		lines = append(lines[:maxMessageLines], "…")
	}
	out := strings.Join(lines, "\n")
	if len(out) > maxMessageBytes {
		out = strings.ToValidUTF8(out[:maxMessageBytes], "") + "…"
	}
	return out
}

// render writes the block of one guard or check.
func (l *testLines) render(b *strings.Builder) {
	if len(l.names) == 0 {
		return
	}
	switch {
	case l.regressed:
		fmt.Fprintf(b, "Tests of guard %q that passed before this work and fail now (regressions: fix these first):\n\n", l.guard)
	case l.check:
		fmt.Fprintf(b, "Tests of the task's check %q that fail:\n\n", l.guard)
	default:
		fmt.Fprintf(b, "Tests of guard %q that fail:\n\n", l.guard)
	}
	for i, name := range l.names {
		fmt.Fprintf(b, "- %s\n", name)
		if m := l.messages[i]; m != "" {
			b.WriteString("  " + strings.ReplaceAll(m, "\n", "\n  ") + "\n")
		}
	}
	if l.more > 0 {
		fmt.Fprintf(b, "- and %d more (guard.log has them all)\n", l.more)
	}
	b.WriteString("\n")
}

// prependTests puts the failing tests' block at the top of failure.log,
// before the failing commands' output.
func prependTests(failureLog string, tests []testLines) error {
	var b strings.Builder
	for i := range tests {
		tests[i].render(&b)
	}
	if b.Len() == 0 {
		return nil
	}
	block := b.String()
	if len(block) > maxTestsBlock {
		block = strings.ToValidUTF8(block[:maxTestsBlock], "") + "\n…\n\n"
	}
	rest, err := fsutil.ReadFile(failureLog)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return fsutil.ReplaceFile(failureLog, append([]byte(block+"The failing commands' output:\n\n"), rest...), 0o644, fsutil.NotSynced)
}

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

// testLines are what failed the verdict of one guard or check by its
// report, for the top of failure.log: groups of names, each with the
// head of its message where it has one.
type testLines struct {
	guard  string
	check  bool
	groups []lineGroup
}

// lineGroup is one kind of failure: a heading and its names.
type lineGroup struct {
	heading  string
	names    []string
	messages []string
	more     int
}

// add appends an entry, within maxTestsNamed.
func (g *lineGroup) add(name, msg string) {
	if len(g.names) == maxTestsNamed {
		g.more++
		return
	}
	g.names = append(g.names, name)
	g.messages = append(g.messages, head(msg))
}

// note notes what c holds of res's report: against a baseline
// (baseline), regressions first, then new failures, units that broke and
// tests that vanished; without one, every failing test and broken unit.
func (l *testLines) note(res guard.Result, c changes, baseline bool) {
	rep := res.Report
	if rep == nil {
		return
	}
	kind := fmt.Sprintf("guard %q", l.guard)
	if l.check {
		kind = fmt.Sprintf("the task's check %q", l.guard)
	}
	tests := func(heading string, names []string) {
		g := lineGroup{heading: heading}
		for _, name := range names {
			t, _ := rep.Lookup(name)
			g.add(name, t.Message)
		}
		l.groups = append(l.groups, g)
	}
	if baseline {
		tests(fmt.Sprintf("Tests of %s that passed before this work and fail now (regressions: fix these first):", kind), c.regressed)
		tests(fmt.Sprintf("Tests of %s that fail and did not fail before this work (new tests must pass too):", kind), c.newFailing)
	} else {
		tests(fmt.Sprintf("Tests of %s that fail:", kind), c.newFailing)
	}
	broken := lineGroup{heading: fmt.Sprintf("Parts of %s whose tests could not run (each must build and load, as it did before):", kind)}
	if !baseline {
		broken.heading = fmt.Sprintf("Parts of %s whose tests could not run:", kind)
	}
	for _, b := range c.newBroken {
		broken.add(b.Unit+" ("+b.Reason+")", b.Message)
	}
	l.groups = append(l.groups, broken)
	vanished := lineGroup{heading: fmt.Sprintf("Tests of %s that passed before this work and no longer run (vanished: absent from its report, or skipped now). "+
		"Make them run and pass again; if the task is to remove or rename them, say so in your summary and answer status \"blocked\": only a person can list them in the task's \"removes\":", kind)}
	for _, name := range c.vanished {
		vanished.add(name, "")
	}
	l.groups = append(l.groups, vanished)
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

// render writes the groups of one guard or check.
func (l *testLines) render(b *strings.Builder) {
	for _, g := range l.groups {
		if len(g.names) == 0 {
			continue
		}
		b.WriteString(g.heading + "\n\n")
		for i, name := range g.names {
			fmt.Fprintf(b, "- %s\n", name)
			if m := g.messages[i]; m != "" {
				b.WriteString("  " + strings.ReplaceAll(m, "\n", "\n  ") + "\n")
			}
		}
		if g.more > 0 {
			fmt.Fprintf(b, "- and %d more (guard.log has them all)\n", g.more)
		}
		b.WriteString("\n")
	}
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

// Package textfmt writes the small pieces of text the context files and
// the prompt share, so that an agent reads a task the same way in both:
// "name: value" fields and "name:" lists whose multi-line values are
// indented under them, and text folded to one bounded line.
package textfmt

import (
	"strings"
	"unicode/utf8"
)

// Field writes "name: value", the value's later lines indented by two
// spaces under it.
func Field(b *strings.Builder, name, value string) {
	b.WriteString(name + ":")
	indented(b, value)
}

// Task writes a task's title, goal and acceptance criteria, as Field
// and List do: how the prompt's goal file and the reviewer's prompt say
// what the task asks.
func Task(b *strings.Builder, title, goal string, acceptance []string) {
	Field(b, "title", title)
	Field(b, "goal", goal)
	List(b, "acceptance", acceptance)
}

// List writes "name:" and one "- item" line per item (later lines of an
// item indented), or "name: (none)".
func List(b *strings.Builder, name string, items []string) {
	if len(items) == 0 {
		b.WriteString(name + ": (none)\n")
		return
	}
	b.WriteString(name + ":\n")
	for _, it := range items {
		b.WriteString("-")
		indented(b, it)
	}
}

// indented writes value after a space, its later lines indented by two
// spaces, trailing blanks trimmed, and a final newline.
func indented(b *strings.Builder, value string) {
	value = strings.TrimSpace(NormalizeNewlines(value))
	for i, line := range strings.Split(value, "\n") {
		line = strings.TrimRight(line, " \t")
		switch {
		case i == 0 && line != "":
			b.WriteString(" " + line)
		case i > 0 && line != "":
			b.WriteString("  " + line)
		}
		b.WriteString("\n")
	}
}

// NormalizeNewlines turns CRLF and lone CR line ends into LF.
func NormalizeNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

// OneLine folds s's whitespace to single spaces and keeps at most max
// runes of it, the last one replaced by "…" when it is cut.
func OneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == max-1 {
			break
		}
		count++
	}
	return s[:i] + "…"
}

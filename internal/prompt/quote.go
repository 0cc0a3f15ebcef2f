package prompt

import "strings"

// Text that is not the runner's own enters a prompt quoted (the agent's
// words), defused (text that may hold words the agent chose) or fenced
// (output), so that none of it reads as a section of the prompt.

// Quote shows text the agent wrote as a quotation: every line after
// "> " (">" for a blank one), so that none of it can start a line of
// the prompt, let alone one that reads as a section heading.
func Quote(text string) string {
	if text == "" {
		return ""
	}
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		if strings.TrimSpace(line) == "" {
			lines[i] = ">"
		} else {
			lines[i] = "> " + line
		}
	}
	return strings.Join(lines, "\n")
}

// Defuse escapes every line of text that would read as a section heading
// of the prompt ("# Name", indented by up to three spaces, as Markdown
// reads it): its "#" gets a backslash before it. Sub-headings ("## ...")
// are left as they are. It is the last guard of a section whose text
// is not the agent's (a task's goal, a guard's result) but may hold
// words the agent chose (a decomposition's children, a test's name).
func Defuse(text string) string {
	if !strings.Contains(text, "#") {
		return text
	}
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		rest := strings.TrimLeft(line, " ")
		if indent := len(line) - len(rest); indent <= 3 && isSectionHeading(rest) {
			lines[i] = line[:indent] + "\\" + rest
		}
	}
	return strings.Join(lines, "\n")
}

// isSectionHeading reports whether an unindented line reads as a
// first-level Markdown heading: "#" alone, or followed by blank space.
func isSectionHeading(line string) bool {
	return line == "#" || strings.HasPrefix(line, "# ") || strings.HasPrefix(line, "#\t")
}

// Fence returns a backtick fence (without info string) longer than any
// backtick run in body, so that body shows as one code block.
func Fence(body string) string {
	longest, run := 0, 0
	for i := 0; i < len(body); i++ {
		if body[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

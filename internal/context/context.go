// Package contextfiles renders and writes the ephemeral files in
// .runner/context/ (goal.md, history.md, failure.md) that tell a fresh agent
// session what the selected node is and what happened on its previous
// attempt.
//
// The folder is internal/context, but the package is named contextfiles so
// that it never shadows the standard library's context package in the files
// that import both.
package contextfiles

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/textfmt"
	"github.com/runner-cli/runner/internal/tree"
)

// File names inside .runner/context/.
const (
	GoalFile    = "goal.md"
	HistoryFile = "history.md"
	FailureFile = "failure.md"
)

// Headings that start each file.
const (
	GoalHeading    = "# Goal"
	HistoryHeading = "# History (previous attempt)"
	FailureHeading = "# Failure (previous attempt)"
)

// DefaultLimit bounds failure.md (and history.md) when Render is given a
// limit ≤ 0.
const DefaultLimit = 16 << 10

// Previous-iteration statuses, as stored in run_state.last_status, that make
// Render write history.md for the same node.
const (
	StatusRetry       = "retry"
	StatusError       = "error"
	StatusInterrupted = "interrupted"
)

// GuardFail is the run_state.last_guard value that makes Render write
// failure.md for the same node.
const GuardFail = "fail"

// Log files of a run folder that failure.md is built from, in order of
// preference.
const (
	FailureLog = "failure.log"
	GuardLog   = "guard.log"
)

// InterruptedNote is appended to history.md when the previous attempt was
// interrupted.
const InterruptedNote = "The previous attempt was interrupted before it finished. The working tree may hold partial changes from it: inspect them (for example with `git status` and `git diff`) and keep, finish or revert them deliberately."

// Previous describes the iteration before the one being prepared, as
// recorded in run_state.json.
type Previous struct {
	Iteration int    // previous iteration number (0 = none)
	Node      string // run_state.last_node
	Status    string // run_state.last_status: done|retry|blocked|decomposed|error|interrupted
	Summary   string // run_state.last_summary
	Guard     string // run_state.last_guard: pass|fail|skipped
	RunDir    string // absolute runs/NNNNNN of the previous iteration ("" if none)
}

// Ancestor is a group above the selected node: its path, title, goal and
// acceptance, which the task serves (goal.md says them after the task's
// own).
type Ancestor struct {
	Path, Title, Goal string
	Acceptance        []string
}

// PersonAnswer is a person's answer to the task's question (`runner
// answer`), with the question it answers ("" when the task was not
// blocked).
type PersonAnswer struct {
	Question, Answer string
}

// answersKept is how many of a task's answers goal.md carries: the last.
const answersKept = 3

// ancestorLimit bounds what goal.md says of each ancestor, and
// ancestorsLimit of all of them: the task's own goal stays first and
// whole.
const (
	ancestorLimit  = 2 << 10
	ancestorsLimit = 8 << 10
)

// Files holds the rendered contents of the context files. An empty string
// means the file is not written.
type Files struct {
	Goal, History, Failure string
}

// Render builds the context files for node. goal.md is always rendered.
// history.md is rendered only when the previous iteration worked on the same
// node and ended with retry, an executor error or an interruption. failure.md
// is rendered only when the previous iteration worked on the same node and
// its guards failed; it holds the tail of that run's failure.log (or
// guard.log when failure.log is missing or empty), at most limit bytes
// (DefaultLimit when limit ≤ 0). Nothing about another node is ever
// rendered.
//
// Render reads nothing but those two logs.
func Render(node *tree.Node, prev Previous, limit int64) (Files, error) {
	return RenderWithin(node, nil, nil, prev, limit)
}

// RenderWithin is Render for a node under ancestors (the root first),
// which a person answered: goal.md also says, after the node's own goal,
// the person's answers to its questions (the last answersKept), then the
// goal and acceptance of each ancestor that has them ("Within"), each
// bounded (ancestorLimit), all of them too (ancestorsLimit, the nearest
// kept).
func RenderWithin(node *tree.Node, ancestors []Ancestor, answers []PersonAnswer, prev Previous, limit int64) (Files, error) {
	if node == nil {
		return Files{}, errors.New("render context files: no node selected")
	}
	if limit <= 0 {
		limit = DefaultLimit
	}
	f := Files{Goal: renderGoal(node) + renderAnswers(answers) + renderAncestors(ancestors)}
	sameNode := prev.Node != "" && prev.Node == node.ID
	if !sameNode {
		return f, nil
	}
	switch prev.Status {
	case StatusRetry, StatusError, StatusInterrupted:
		f.History = renderHistory(prev, limit)
	}
	if prev.Guard == GuardFail {
		failure, err := renderFailure(prev, limit)
		if err != nil {
			return Files{}, err
		}
		f.Failure = failure
	}
	return f, nil
}

func renderGoal(n *tree.Node) string {
	var b strings.Builder
	b.WriteString(GoalHeading + "\n\n")
	textfmt.Task(&b, n.Title, n.Goal, n.Acceptance)
	return b.String()
}

// renderAnswers says a person's answers to the task's questions.
func renderAnswers(answers []PersonAnswer) string {
	if len(answers) == 0 {
		return ""
	}
	if len(answers) > answersKept {
		answers = answers[len(answers)-answersKept:]
	}
	var b strings.Builder
	b.WriteString("\n## Answers from a person\n\nA person answered this task's questions; the answer holds over anything above that it contradicts.\n")
	for _, a := range answers {
		b.WriteString("\n")
		if strings.TrimSpace(a.Question) != "" {
			textfmt.Field(&b, "question", a.Question)
		}
		textfmt.Field(&b, "answer", a.Answer)
	}
	return b.String()
}

// renderAncestors says what the groups above the task ask for, the
// root first; those with neither goal nor acceptance are left out.
func renderAncestors(ancestors []Ancestor) string {
	var parts []string
	for _, a := range ancestors {
		if strings.TrimSpace(a.Goal) == "" && len(a.Acceptance) == 0 {
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "\n### %s: %s\n\n", a.Path, textfmt.OneLine(a.Title, 200))
		if strings.TrimSpace(a.Goal) != "" {
			textfmt.Field(&b, "goal", a.Goal)
		}
		if len(a.Acceptance) > 0 {
			textfmt.List(&b, "acceptance", a.Acceptance)
		}
		part := b.String()
		if len(part) > ancestorLimit {
			cut := ancestorLimit - len("\n[truncated]\n")
			for cut > 0 && !utf8.RuneStart(part[cut]) {
				cut--
			}
			part = part[:cut] + "\n[truncated]\n"
		}
		parts = append(parts, part)
	}
	total := 0
	for i := len(parts) - 1; i >= 0; i-- {
		if total += len(parts[i]); total > ancestorsLimit {
			parts = parts[i+1:] // the nearest groups are kept
			break
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "\n## Within\n\nThis task is part of the groups below (the whole tree first); what they ask for holds for it too.\n" + strings.Join(parts, "")
}

func renderHistory(prev Previous, limit int64) string {
	summary := strings.TrimSpace(textfmt.NormalizeNewlines(prev.Summary))
	if summary == "" {
		switch prev.Status {
		case StatusError:
			summary = fmt.Sprintf("Iteration %d ended with an executor error and left no summary.", prev.Iteration)
		case StatusInterrupted:
			summary = fmt.Sprintf("Iteration %d was interrupted.", prev.Iteration)
		default:
			summary = fmt.Sprintf("Iteration %d ended with status %s and left no summary.", prev.Iteration, prev.Status)
		}
	}
	summary = headWithin(summary, int(limit))
	var b strings.Builder
	b.WriteString(HistoryHeading + "\n\n")
	b.WriteString(summary)
	b.WriteString("\n")
	if prev.Status == StatusInterrupted {
		b.WriteString("\n" + InterruptedNote + "\n")
	}
	return b.String()
}

func renderFailure(prev Previous, limit int64) (string, error) {
	if prev.RunDir == "" {
		return FailureHeading + "\n\n" + fmt.Sprintf("The guards of iteration %d failed, but its run folder is unknown, so no guard output is available.\n", prev.Iteration), nil
	}
	for _, name := range []string{FailureLog, GuardLog} {
		path := filepath.Join(prev.RunDir, name)
		body, err := readTail(path, limit)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("render %s for node %q: %w", FailureFile, prev.Node, err)
		}
		if strings.TrimSpace(body) == "" {
			continue
		}
		return FailureHeading + "\n\n" + strings.TrimRight(body, "\n") + "\n", nil
	}
	return FailureHeading + "\n\n" + fmt.Sprintf("The guards of iteration %d failed, but no guard output was kept: %s and %s in %s are missing or empty.\n", prev.Iteration, FailureLog, GuardLog, prev.RunDir), nil
}

// readTail returns the last part of path, at most limit bytes including a
// first line saying how much was cut. The kept part starts at a line
// boundary when one is near, and always at a UTF-8 boundary; invalid UTF-8
// in the log is replaced with U+FFFD and CR LF line ends become LF.
func readTail(path string, limit int64) (string, error) {
	raw, start, err := fsutil.ReadEnd(path, limit)
	if err != nil {
		return "", err
	}
	if start == 0 {
		if text := cleanText(raw); int64(len(text)) <= limit {
			return text, nil
		}
	}
	name := filepath.Base(path)
	off := 0 // bytes of raw dropped from the front
	for {
		note := fmt.Sprintf("[... %d bytes cut from the start of %s; its end follows ...]\n", start+int64(off), name)
		room := int(limit) - len(note)
		if room <= 0 {
			return strings.TrimSuffix(note, "\n"), nil
		}
		next := off
		if len(raw)-off > room {
			next = tailStart(raw, len(raw)-room)
		}
		text := cleanText(raw[next:])
		if next == off && len(text) <= room {
			return note + text, nil
		}
		if len(text) > room {
			// Replacement characters made the text longer: drop that much more.
			next = tailStart(raw, next+len(text)-room)
		}
		off = next
	}
}

// tailStart returns the offset at or after i where a tail of b should
// start: a rune boundary, or just after a newline when one is near.
func tailStart(b []byte, i int) int {
	for i < len(b) && !utf8.RuneStart(b[i]) {
		i++
	}
	window := min((len(b)-i)/4, 512)
	for j := i; j < len(b) && j-i < window; j++ {
		if b[j] == '\n' {
			return j + 1
		}
	}
	return i
}

func cleanText(b []byte) string {
	return strings.ToValidUTF8(textfmt.NormalizeNewlines(string(b)), "\uFFFD")
}

// headWithin returns s cut to at most n bytes (at a rune boundary, at a line
// boundary when one is near), ending with a line saying how much was cut.
func headWithin(s string, n int) string {
	if len(s) <= n {
		return s
	}
	note := func(cut int) string { return fmt.Sprintf("\n[... %d more bytes cut ...]", cut) }
	room := n - len(note(len(s)))
	if room <= 0 {
		return strings.TrimPrefix(note(len(s)), "\n")
	}
	i := room
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	if j := strings.LastIndexByte(s[:i], '\n'); j >= 0 && i-j <= min(room/4, 512) {
		i = j
	}
	return s[:i] + note(len(s)-i)
}

// Write empties dir (creating it when missing; every entry is removed) and
// writes goal.md, plus history.md and failure.md when their contents are not
// empty. A file that is written again is overwritten in place rather than
// removed and created, and nothing is fsynced: the files are rewritten
// before every iteration (and read by the agent only once they are
// written), so none needs to survive a crash, and reusing them spares the
// file system a file deleted and one created per iteration.
//
// The agent shares dir: only what is inside it is ever removed or written.
// A symbolic link in the place of dir is removed itself and the folder
// made again; a link inside it is removed, never followed; a file
// with another hard link is replaced rather than overwritten
// (fsutil.OpenWrite), so the other file keeps its content.
func Write(dir string, f Files) error {
	if dir == "" {
		return errors.New("write context files: no directory given")
	}
	err := fsutil.MkdirAll(dir, 0o755)
	if errors.Is(err, fsutil.ErrSymlink) {
		// A link in the folder's place: the link is removed, never
		// followed, and the folder made again.
		if fsutil.Remove(dir) == nil {
			err = fsutil.MkdirAll(dir, 0o755)
		}
	}
	if err != nil {
		return fmt.Errorf("write context files: create %s: %w", dir, err)
	}
	files := []struct{ name, data string }{
		{GoalFile, f.Goal},
		{HistoryFile, f.History},
		{FailureFile, f.Failure},
	}
	keep := map[string]bool{}
	for i, file := range files {
		if i == 0 || file.data != "" {
			keep[file.name] = true
		}
	}
	entries, err := fsutil.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("write context files: list %s: %w", dir, err)
	}
	for _, e := range entries {
		if keep[e.Name()] && e.Type().IsRegular() {
			continue
		}
		if err := fsutil.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("write context files: empty %s: %w", dir, err)
		}
	}
	for _, file := range files {
		if !keep[file.name] {
			continue
		}
		if err := overwrite(filepath.Join(dir, file.name), []byte(file.data)); err != nil {
			return fmt.Errorf("write context files: %w", err)
		}
	}
	return nil
}

// overwrite replaces the content of path in place, creating it if needed;
// a file that is not the runner's own is replaced instead (fsutil.OpenWrite).
func overwrite(path string, data []byte) error {
	f, err := fsutil.OpenWrite(path)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(data, 0)
	if err == nil {
		err = f.Truncate(int64(len(data)))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrConflict is matched (errors.Is) by the *ConflictError of an
// Integrate whose task changed what the run branch changed since.
var ErrConflict = errors.New("conflict")

// Limits of ConflictError.Hunks: at most hunksLimit bytes (then a line
// saying how many more there were), hunkContext lines of context on each
// side of a conflicted region.
const (
	hunksLimit  = 8 << 10
	hunkContext = 3
)

// ConflictError is an Integrate that found the task's changes in conflict
// with those the run branch got since the task's parent: the task must be
// worked on again from the run branch's head.
type ConflictError struct {
	Onto string // the run branch's head the task was replayed onto
	Task string // the task's commit
	// Files are the conflicted paths, sorted: text conflicts, and those
	// of binary files, of a file modified on one side and deleted on the
	// other, of renames, of a file where the other side has a folder
	// (git then puts one of them at "<path>~<commit>", listed too).
	Files []string
	// Hunks are the conflicted regions of the text files, as git wrote
	// them: the run branch's side between "<<<<<<< <onto>" and
	// "=======" (the parent's after "|||||||" too, where the
	// repository sets merge.conflictStyle = diff3), the task's between
	// it and ">>>>>>> <task>", with
	// hunkContext lines of context, each region after a "--- <path>"
	// line. A file without such regions (binary, modify/delete, rename)
	// gets its "--- <path>" line and git's message saying which kind of
	// conflict it is. At most 8 KiB, then a "... N more bytes" line.
	Hunks string
	// Merge: the conflict is a Merge's, of the branch at Task into the
	// one at Onto, not a task's replay.
	Merge bool
}

func (e *ConflictError) Error() string {
	if e.Merge {
		return fmt.Sprintf("merging %s into %s: conflict in %s", shortID(e.Task), shortID(e.Onto), nameFiles(e.Files, 10))
	}
	return fmt.Sprintf("replaying task commit %s onto %s: conflict in %s", shortID(e.Task), shortID(e.Onto), nameFiles(e.Files, 10))
}

func (e *ConflictError) Unwrap() error { return ErrConflict }

// shortID is the first 12 digits of an object name.
func shortID(id string) string {
	if len(id) > 12 && isObjectID(id) {
		return id[:12]
	}
	return id
}

// nameFiles names at most max paths on one line (quoted when they hold
// spaces or control characters), then how many more there are.
func nameFiles(files []string, max int) string {
	var b strings.Builder
	for i, f := range files {
		if i == max {
			fmt.Fprintf(&b, " and %d more", len(files)-max)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteArg(f))
	}
	return b.String()
}

// conflictError makes the *ConflictError of a merge-tree that found
// conflicts, reading the conflicted regions from the blobs of the tree it
// wrote. When they cannot be read, Hunks says so: the conflict is still
// the answer.
func (r *Repo) conflictError(ctx context.Context, onto, task string, mt mergeTree) error {
	text := map[string]bool{} // files whose blob holds conflict markers
	for _, m := range mt.msgs {
		if m.kind == "CONFLICT (contents)" {
			for _, p := range m.paths {
				text[p] = true
			}
		}
	}
	for _, m := range mt.msgs {
		if m.kind == "CONFLICT (binary)" {
			for _, p := range m.paths {
				delete(text, p)
			}
		}
	}
	var read []string
	for _, f := range mt.files {
		if text[f] {
			read = append(read, f)
		}
	}
	blobs, err := r.readBlobs(ctx, mt.tree, read)
	h := &clip{limit: hunksLimit}
	if err != nil {
		h.WriteString(fmt.Sprintf("(the conflicted files could not be read: %v)\n", err))
	}
	shown := make([]bool, len(mt.msgs))
	for _, f := range mt.files {
		if writeRegions(h, f, blobs[f]) {
			continue
		}
		h.WriteString("--- " + f + "\n")
		said := false
		for i, m := range mt.msgs {
			if !strings.HasPrefix(m.kind, "CONFLICT") || !slices.Contains(m.paths, f) {
				continue
			}
			switch {
			case shown[i]:
				h.WriteString(m.kind + ", as above\n")
			case strings.HasPrefix(m.text, "CONFLICT"):
				h.WriteString(m.text + "\n")
			default: // "warning: Cannot merge binary files: ..."
				h.WriteString(m.kind + ": " + m.text + "\n")
			}
			shown[i], said = true, true
		}
		if !said {
			h.WriteString("(in conflict, without conflict markers)\n")
		}
	}
	return &ConflictError{Onto: onto, Task: task, Files: mt.files, Hunks: h.String()}
}

// readBlobs returns the content of the blobs at paths in tree (one `git
// cat-file --batch -z`); a path that is missing or not a blob is left
// out.
func (r *Repo) readBlobs(ctx context.Context, tree string, paths []string) (map[string]string, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	var in bytes.Buffer
	for _, p := range paths {
		in.WriteString(tree + ":" + p)
		in.WriteByte(0)
	}
	out, err := r.git(ctx, call{stdin: in.Bytes()}, "cat-file", "--batch", "-z")
	if err != nil {
		return nil, err
	}
	rest := out.out
	blobs := map[string]string{}
	for _, p := range paths {
		// "<spec> missing": the spec may hold a newline, so it is
		// matched whole.
		if after, ok := bytes.CutPrefix(rest, []byte(tree+":"+p+" missing\n")); ok {
			rest = after
			continue
		}
		header, after, ok := bytes.Cut(rest, []byte("\n"))
		f := strings.Fields(string(header)) // <id> <type> <size>
		var size int
		if ok && len(f) == 3 {
			size, err = strconv.Atoi(f[2])
		}
		if !ok || len(f) != 3 || err != nil || size < 0 || len(after) < size+1 {
			return blobs, fmt.Errorf("unexpected output of git cat-file for %s: %q", p, clipQuote(header))
		}
		if f[1] == "blob" {
			blobs[p] = string(after[:size])
		}
		rest = after[size+1:]
	}
	return blobs, nil
}

// writeRegions writes the conflicted regions of content (lines from one
// starting with "<<<<<<<" to the next starting with ">>>>>>>"), with
// hunkContext lines of context, each after a "--- path" line; regions
// whose context touch are one. It reports whether it found any.
func writeRegions(w *clip, path, content string) bool {
	if !strings.Contains(content, "<<<<<<<") {
		return false
	}
	ls := strings.SplitAfter(content, "\n")
	if ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	type span struct{ from, to int } // lines [from, to)
	var spans []span
	for i := 0; i < len(ls); i++ {
		if !strings.HasPrefix(ls[i], "<<<<<<<") {
			continue
		}
		end := i + 1
		for end < len(ls) && !strings.HasPrefix(ls[end], ">>>>>>>") {
			end++
		}
		s := span{max(i-hunkContext, 0), min(end+1+hunkContext, len(ls))}
		if n := len(spans); n > 0 && s.from <= spans[n-1].to {
			spans[n-1].to = s.to
		} else {
			spans = append(spans, s)
		}
		i = end
	}
	for _, s := range spans {
		w.WriteString("--- " + path + "\n")
		for _, l := range ls[s.from:s.to] {
			w.WriteString(l)
		}
		if !strings.HasSuffix(ls[s.to-1], "\n") {
			w.WriteString("\n")
		}
	}
	return len(spans) > 0
}

// clip keeps the first limit bytes written to it and counts the others.
type clip struct {
	b       strings.Builder
	limit   int
	dropped int
}

func (c *clip) WriteString(s string) {
	if room := c.limit - c.b.Len(); room < len(s) {
		room = max(room, 0)
		c.b.WriteString(s[:room])
		c.dropped += len(s) - room
		return
	}
	c.b.WriteString(s)
}

// String is what was kept, cut after its last whole line (or its last
// whole character, when it has no line end) when anything was dropped,
// then a line saying how many bytes are not shown.
func (c *clip) String() string {
	s := c.b.String()
	if c.dropped == 0 {
		return s
	}
	cut := strings.LastIndexByte(s, '\n') + 1
	if cut == 0 {
		cut = len(s)
		i := len(s) - 1
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		if i >= 0 && !utf8.FullRuneInString(s[i:]) {
			cut = i
		}
	}
	return s[:cut] + fmt.Sprintf("... %d more bytes\n", c.dropped+len(s)-cut)
}

package guard

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/runner-cli/runner/internal/fsutil"
)

// Heads returns the head of each failing guard's output, as the
// failure.log Run wrote for guards and results holds it: one string per
// result that did not pass, in order, of at most maxLines lines and
// maxBytes bytes, without the header and footer lines Run put around it.
// The file is read as a stream (a guard's output may be megabytes). What
// cannot be read, or does not look as Run writes it, gives an empty head.
func Heads(failureLog string, guards []Spec, results []Result, maxLines, maxBytes int) []string {
	var failing []int
	for i, res := range results {
		if res.Status != StatusPass {
			failing = append(failing, i)
		}
	}
	heads := make([]string, len(failing))
	f, err := fsutil.Open(failureLog)
	if err != nil {
		return heads
	}
	defer f.Close()
	in := bufio.NewReaderSize(f, 64<<10)
	for k, i := range failing {
		if i >= len(guards) {
			return heads
		}
		head, ok := readSection(in, guards[i], results[i], maxLines, maxBytes)
		heads[k] = head
		if !ok {
			return heads
		}
	}
	return heads
}

// readSection reads one guard's section of failure.log from in: its
// header, its output (of which it keeps the head), and its footer. ok is
// false when the section is not as runOne writes it.
func readSection(in *bufio.Reader, g Spec, res Result, maxLines, maxBytes int) (head string, ok bool) {
	header := fmt.Sprintf("=== guard %s: %s ===\n", g.Name, g.Run)
	got := make([]byte, len(header))
	if _, err := io.ReadFull(in, got); err != nil || string(got) != header {
		return "", false
	}
	footer := []byte(fmt.Sprintf("=== guard %s: %s, exit %d, ", res.Name, res.Status, res.ExitCode))
	var b strings.Builder
	lines, lineStart := 0, true
	for {
		frag, err := in.ReadSlice('\n')
		if lineStart && bytes.HasPrefix(frag, footer) {
			for errors.Is(err, bufio.ErrBufferFull) { // the rest of a long footer
				_, err = in.ReadSlice('\n')
			}
			return strings.TrimRight(b.String(), "\n"), err == nil || errors.Is(err, io.EOF)
		}
		if lines < maxLines && b.Len() < maxBytes {
			b.Write(frag[:min(len(frag), maxBytes-b.Len())])
		}
		lineStart = len(frag) > 0 && frag[len(frag)-1] == '\n'
		if lineStart {
			lines++
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return strings.TrimRight(b.String(), "\n"), false
		}
	}
}

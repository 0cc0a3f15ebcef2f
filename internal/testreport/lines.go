package testreport

import (
	"bufio"
	"bytes"
	"io"
	"unicode/utf8"
)

// The reading shared by the readers: a stream's lines, bounded, and the
// head of a failure's message.

// lines reads a stream line by line, without the line ends, skipping
// lines longer than MaxLine.
type lines struct {
	r    *bufio.Reader
	n    int // number of the line last returned, from 1
	long []byte
}

func newLines(r io.Reader) *lines {
	return &lines{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next line, valid until the following call, or io.EOF
// after the last one, or the reader's error.
func (l *lines) next() ([]byte, error) {
	for {
		line, err := l.r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line longer than the buffer: gather it up to MaxLine.
			l.long = append(l.long[:0], line...)
			for err == bufio.ErrBufferFull {
				line, err = l.r.ReadSlice('\n')
				if len(l.long) <= MaxLine {
					l.long = append(l.long, line...)
				}
			}
			line = l.long
		}
		if len(line) == 0 && err != nil {
			return nil, err
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		l.n++
		line = bytes.TrimSuffix(line, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) > MaxLine {
			if cap(l.long) > 64<<10 {
				l.long = nil
			}
			continue
		}
		return line, nil
	}
}

// each calls fn with every line, valid during the call, to the end of
// the stream, and returns the reader's error if it fails first.
func (l *lines) each(fn func(line []byte)) error {
	for {
		line, err := l.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		fn(line)
	}
}

// head gathers the start of a message: it keeps the first MaxMessage
// bytes written and counts the rest.
type head struct {
	b []byte
}

func (h *head) add(s string)      { addHead(h, s) }
func (h *head) addBytes(s []byte) { addHead(h, s) }

func addHead[T string | []byte](h *head, s T) {
	if h == nil {
		return
	}
	if room := MaxMessage + utf8.UTFMax - len(h.b); room > 0 {
		if len(s) > room {
			s = s[:room]
		}
		h.b = append(h.b, s...)
	}
}

func (h *head) String() string {
	if h == nil {
		return ""
	}
	return string(h.b)
}

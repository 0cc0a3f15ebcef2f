package executor

import "bytes"

// StreamLineMax is the longest stdout line the event stream reads. The
// usage, the Codex failure events, the refused commands and the Claude
// result event are read from every line of the agent's stdout up to this
// length as it passes; a longer line is skipped (and counted), so memory
// stays bounded by this one line whatever the agent prints.
const StreamLineMax = 4 << 20

// lineSplitter is an io.Writer that cuts what is written to it into lines
// and calls fn with each, without its newline, and the offset of its
// first byte in the stream. A line longer than max is skipped. Write never
// fails. fn must not keep the slice.
type lineSplitter struct {
	max int
	fn  func(line []byte, start int64)

	buf   []byte // the current line, when it spans writes
	long  bool   // the current line is over max: its bytes are dropped
	off   int64  // bytes written so far
	start int64  // offset of the current line
	skip  int64  // lines skipped as too long
}

// lineBufKeep is the largest line buffer kept between lines; a larger one
// (grown for one long line) is released.
const lineBufKeep = 64 << 10

func (s *lineSplitter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.add(p)
			s.off += int64(len(p))
			break
		}
		if len(s.buf) == 0 && !s.long && i <= s.max {
			s.fn(p[:i], s.start) // the whole line is in p: no copy
		} else {
			s.add(p[:i])
			s.end()
		}
		s.off += int64(i) + 1
		s.start = s.off
		p = p[i+1:]
	}
	return n, nil
}

// Close ends a last line that has no newline.
func (s *lineSplitter) Close() {
	if len(s.buf) > 0 || s.long {
		s.end()
	}
	s.start = s.off
}

func (s *lineSplitter) add(b []byte) {
	if s.long {
		return
	}
	if len(s.buf)+len(b) > s.max {
		s.long = true
		s.buf = s.buf[:0]
		return
	}
	s.buf = append(s.buf, b...)
}

func (s *lineSplitter) end() {
	if s.long {
		s.skip++
	} else {
		s.fn(s.buf, s.start)
	}
	s.long = false
	if cap(s.buf) > lineBufKeep {
		s.buf = nil
	} else {
		s.buf = s.buf[:0]
	}
}

// eventStream reads the agent's stdout line by line as it passes: the
// Codex events (failures, usage, refused commands) and the last Claude
// result event. It is an io.Writer that never fails; Close ends the last
// line.
type eventStream struct {
	split lineSplitter
	codex codexScanner
	// claude is the last Claude result event, and claudeEnd the offset in
	// stdout just past it.
	claude    *claudeResult
	claudeEnd int64
	// live, when set, reads the usage of Claude's assistant events as
	// they pass (live.go).
	live *liveUsage
}

func newEventStream() *eventStream {
	e := &eventStream{}
	e.split = lineSplitter{max: StreamLineMax, fn: e.line}
	return e
}

func (e *eventStream) Write(p []byte) (int, error) { return e.split.Write(p) }

func (e *eventStream) Close() { e.split.Close() }

func (e *eventStream) line(line []byte, start int64) {
	if !bytes.Contains(line, []byte(`"type"`)) {
		return
	}
	e.live.claudeAssistant(line)
	e.codex.line(line)
	if !bytes.Contains(line, []byte(`"result"`)) {
		return
	}
	if t, ok := leadingType(bytes.TrimSpace(line)); ok && t != "result" {
		return // one event per line, and not a result event
	}
	spans := topLevelObjects(line)
	if c, i := lastClaudeResult(line, spans); c != nil {
		e.claude, e.claudeEnd = c, start+int64(spans[i][1])
	}
}

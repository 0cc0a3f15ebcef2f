package executor

import "bytes"

// scanMaxDepth bounds the nesting the object scanner follows. It also
// bounds the scanner's work on hostile input: a candidate object is
// abandoned at its first syntax error or when it nests deeper than this.
const scanMaxDepth = 128

// topLevelObjects returns the [start, end) spans of the JSON objects in
// data that are not inside another one, in order; text around and between
// them is ignored. A candidate starts at each '{' outside a found object
// and must be a syntactically valid object (strings, escapes, numbers,
// literals) to count.
func topLevelObjects(data []byte) [][2]int {
	var spans [][2]int
	for i := 0; i < len(data); {
		j := bytes.IndexByte(data[i:], '{')
		if j < 0 {
			break
		}
		start := i + j
		if end := objectEnd(data, start); end > 0 {
			spans = append(spans, [2]int{start, end})
			i = end
		} else {
			i = start + 1
		}
	}
	return spans
}

// lastObject returns the last top-level JSON object in data, or nil.
func lastObject(data []byte) []byte {
	spans := topLevelObjects(data)
	if len(spans) == 0 {
		return nil
	}
	last := spans[len(spans)-1]
	return data[last[0]:last[1]]
}

// objectEnd returns the end (exclusive) of the JSON object starting at
// data[start] == '{', or -1 when no valid object starts there.
func objectEnd(data []byte, start int) int {
	s := scanner{data: data, pos: start}
	if !s.object(1) {
		return -1
	}
	return s.pos
}

// scanner is a JSON syntax checker that stops at the first error.
type scanner struct {
	data []byte
	pos  int
}

func (s *scanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

func (s *scanner) peek() byte {
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

func (s *scanner) value(depth int) bool {
	s.space()
	switch c := s.peek(); {
	case c == '{':
		return s.object(depth + 1)
	case c == '[':
		return s.array(depth + 1)
	case c == '"':
		return s.str()
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	}
	return false
}

func (s *scanner) object(depth int) bool {
	if depth > scanMaxDepth || s.peek() != '{' {
		return false
	}
	s.pos++
	s.space()
	if s.peek() == '}' {
		s.pos++
		return true
	}
	for {
		s.space()
		if !s.str() {
			return false
		}
		s.space()
		if s.peek() != ':' {
			return false
		}
		s.pos++
		if !s.value(depth) {
			return false
		}
		s.space()
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return true
		default:
			return false
		}
	}
}

func (s *scanner) array(depth int) bool {
	if depth > scanMaxDepth {
		return false
	}
	s.pos++ // '['
	s.space()
	if s.peek() == ']' {
		s.pos++
		return true
	}
	for {
		if !s.value(depth) {
			return false
		}
		s.space()
		switch s.peek() {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return true
		default:
			return false
		}
	}
}

func (s *scanner) str() bool {
	if s.peek() != '"' {
		return false
	}
	s.pos++
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			return true
		case c == '\\':
			if s.pos+1 >= len(s.data) {
				return false
			}
			switch s.data[s.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.pos += 2
			case 'u':
				if s.pos+6 > len(s.data) {
					return false
				}
				for _, h := range s.data[s.pos+2 : s.pos+6] {
					if !isHex(h) {
						return false
					}
				}
				s.pos += 6
			default:
				return false
			}
		case c < 0x20:
			return false
		default:
			s.pos++
		}
	}
	return false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func (s *scanner) lit(word string) bool {
	if !bytes.HasPrefix(s.data[s.pos:], []byte(word)) {
		return false
	}
	s.pos += len(word)
	return true
}

func (s *scanner) number() bool {
	if s.peek() == '-' {
		s.pos++
	}
	digits := func() int {
		n := 0
		for c := s.peek(); c >= '0' && c <= '9'; c = s.peek() {
			s.pos++
			n++
		}
		return n
	}
	if s.peek() == '0' {
		s.pos++
	} else if digits() == 0 {
		return false
	}
	if s.peek() == '.' {
		s.pos++
		if digits() == 0 {
			return false
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.pos++
		if c := s.peek(); c == '+' || c == '-' {
			s.pos++
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}

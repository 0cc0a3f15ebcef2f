package config

import (
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The TOML library (v1.6) does not expose where a key is: it keeps one
// position per key name, for its own errors, so every [[guard]] would get
// the last one's line, and none for array elements. The lines of keys are
// found by this small scanner instead, only when a problem needs one. It
// runs only on text the library has already accepted, so it can be
// lenient: on anything it does not understand it stops, and keys it did
// not reach simply have no line (a problem then takes its table's).

// keyLines maps the path of every key, table header and array element in
// src to the 1-based line where it first appears.
func keyLines(src string) map[string]int {
	s := &locator{src: src, offsets: map[string]int{}, arrays: map[string]int{}}
	s.document()
	var newlines []int
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			newlines = append(newlines, i)
		}
	}
	lines := make(map[string]int, len(s.offsets))
	for k, off := range s.offsets {
		lines[k] = sort.SearchInts(newlines, off) + 1
	}
	return lines
}

type locator struct {
	src     string
	i       int
	offsets map[string]int // path -> byte offset of its first appearance
	arrays  map[string]int // path of an array of tables -> index of its last element
}

func (s *locator) record(path string, off int) {
	if _, ok := s.offsets[path]; !ok {
		s.offsets[path] = off
	}
}

func (s *locator) stop() { s.i = len(s.src) }

// skip advances n bytes, never past the end.
func (s *locator) skip(n int) { s.i = min(s.i+n, len(s.src)) }

func (s *locator) peek(prefix string) bool { return strings.HasPrefix(s.src[s.i:], prefix) }

// skipSpace skips spaces and tabs on the current line.
func (s *locator) skipSpace() {
	for s.i < len(s.src) && (s.src[s.i] == ' ' || s.src[s.i] == '\t') {
		s.i++
	}
}

// skipBlank skips whitespace, newlines and comments.
func (s *locator) skipBlank() {
	for s.i < len(s.src) {
		switch s.src[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		case '#':
			for s.i < len(s.src) && s.src[s.i] != '\n' {
				s.i++
			}
		default:
			return
		}
	}
}

func (s *locator) document() {
	table := ""
	if s.peek("\ufeff") {
		s.i += len("\ufeff")
	}
	for {
		s.skipBlank()
		if s.i >= len(s.src) {
			return
		}
		start := s.i
		if s.src[s.i] == '[' {
			double := s.peek("[[")
			if double {
				s.i += 2
			} else {
				s.i++
			}
			parts, ok := s.key()
			if !ok {
				s.stop()
				return
			}
			s.skipSpace()
			closing := "]"
			if double {
				closing = "]]"
			}
			if !s.peek(closing) {
				s.stop()
				return
			}
			s.i += len(closing)
			// Resolve the header against arrays of tables defined so far:
			// [guard.x] after [[guard]] belongs to the last guard.
			path := ""
			for j, p := range parts {
				path = keyPath(path, p)
				s.record(path, start)
				if j == len(parts)-1 && double {
					idx := 0
					if last, ok := s.arrays[path]; ok {
						idx = last + 1
					}
					s.arrays[path] = idx
					path = indexPath(path, idx)
					s.record(path, start)
				} else if idx, ok := s.arrays[path]; ok {
					path = indexPath(path, idx)
				}
			}
			table = path
			continue
		}
		if !s.keyValue(table) {
			s.stop()
			return
		}
	}
}

// keyValue reads `key = value` and records the key under table.
func (s *locator) keyValue(table string) bool {
	start := s.i
	parts, ok := s.key()
	if !ok {
		return false
	}
	path := table
	for _, p := range parts {
		path = keyPath(path, p)
		s.record(path, start)
	}
	s.skipSpace()
	if !s.peek("=") {
		return false
	}
	s.i++
	s.skipSpace()
	return s.value(path)
}

// key reads a possibly dotted key and returns its parts.
func (s *locator) key() ([]string, bool) {
	var parts []string
	for {
		s.skipSpace()
		if s.i >= len(s.src) {
			return nil, false
		}
		switch c := s.src[s.i]; {
		case c == '"':
			raw, ok := s.basicString()
			if !ok {
				return nil, false
			}
			parts = append(parts, unescapeBasic(raw))
		case c == '\'':
			raw, ok := s.literalString()
			if !ok {
				return nil, false
			}
			parts = append(parts, raw)
		case isBareKeyByte(c) || c >= utf8.RuneSelf:
			j := s.i
			for s.i < len(s.src) && (isBareKeyByte(s.src[s.i]) || s.src[s.i] >= utf8.RuneSelf) {
				s.i++
			}
			parts = append(parts, s.src[j:s.i])
		default:
			return nil, false
		}
		s.skipSpace()
		if !s.peek(".") {
			return parts, true
		}
		s.i++
	}
}

// value skips one value, recording the elements of arrays and the keys of
// inline tables under path.
func (s *locator) value(path string) bool {
	if s.i >= len(s.src) {
		return false
	}
	switch s.src[s.i] {
	case '"':
		if s.peek(`"""`) {
			return s.multiline(`"""`, true)
		}
		_, ok := s.basicString()
		return ok
	case '\'':
		if s.peek("'''") {
			return s.multiline("'''", false)
		}
		_, ok := s.literalString()
		return ok
	case '[':
		s.i++
		for n := 0; ; n++ {
			s.skipBlank()
			if s.peek("]") {
				s.i++
				return true
			}
			elem := indexPath(path, n)
			s.record(elem, s.i)
			if !s.value(elem) {
				return false
			}
			s.skipBlank()
			switch {
			case s.peek(","):
				s.i++
			case s.peek("]"):
				s.i++
				return true
			default:
				return false
			}
		}
	case '{':
		s.i++
		for {
			s.skipBlank()
			if s.peek("}") {
				s.i++
				return true
			}
			if !s.keyValue(path) {
				return false
			}
			s.skipBlank()
			switch {
			case s.peek(","):
				s.i++
			case s.peek("}"):
				s.i++
				return true
			default:
				return false
			}
		}
	}
	// Numbers, booleans, dates and times run to a separator.
	j := s.i
	for s.i < len(s.src) && !strings.ContainsRune(",]}#\r\n", rune(s.src[s.i])) {
		s.i++
	}
	return s.i > j
}

// basicString reads "..." and returns its raw content.
func (s *locator) basicString() (string, bool) {
	s.i++ // opening quote
	j := s.i
	for s.i < len(s.src) {
		switch s.src[s.i] {
		case '\\':
			s.skip(2)
		case '"':
			raw := s.src[j:s.i]
			s.i++
			return raw, true
		case '\n':
			return "", false
		default:
			s.i++
		}
	}
	return "", false
}

// literalString reads '...' and returns its content.
func (s *locator) literalString() (string, bool) {
	s.i++
	j := strings.IndexAny(s.src[s.i:], "'\n")
	if j < 0 || s.src[s.i+j] != '\'' {
		return "", false
	}
	raw := s.src[s.i : s.i+j]
	s.i += j + 1
	return raw, true
}

// multiline skips a multi-line string opened by delim.
func (s *locator) multiline(delim string, escapes bool) bool {
	s.i += len(delim)
	for s.i < len(s.src) {
		if escapes && s.src[s.i] == '\\' {
			s.skip(2)
			continue
		}
		if s.peek(delim) {
			s.i += len(delim)
			// Up to two quotes may sit right before the closing delimiter.
			for k := 0; k < 2 && s.peek(delim[:1]); k++ {
				s.i++
			}
			return true
		}
		s.i++
	}
	return false
}

// unescapeBasic decodes the escapes of a TOML basic string as Go does.
// TOML's \e and \xHH (a code point, where Go's is a byte) are left
// undecoded: such a key is then not found, and a problem with it takes
// the line of its table.
func unescapeBasic(raw string) string {
	if !strings.Contains(raw, `\`) || strings.Contains(raw, `\x`) {
		return raw
	}
	if s, err := strconv.Unquote(`"` + raw + `"`); err == nil {
		return s
	}
	return raw
}

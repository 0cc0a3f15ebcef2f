package testreport

import (
	"bytes"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// scanEvent reads a test2json line into ev faster than json.Unmarshal,
// for the common case: one flat object whose values are strings,
// numbers, booleans or null, keys without escapes, strings in valid
// UTF-8. It returns false for anything else, and then json.Unmarshal
// reads the line; where scanEvent returns true, ev is what json.Unmarshal
// would have made of the line (FuzzEventScan checks it).
// buf is scratch space for unescaping, kept between calls.
func scanEvent(line []byte, ev *event, buf *[]byte) bool {
	*ev = event{}
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return false
	}
	i = skipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		return skipSpace(line, i+1) == len(line)
	}
	for {
		key, esc, j := scanString(line, i)
		if j < 0 || esc {
			return false
		}
		i = skipSpace(line, j)
		if i >= len(line) || line[i] != ':' {
			return false
		}
		i = skipSpace(line, i+1)
		field := ev.field(key)
		switch {
		case i >= len(line):
			return false
		case line[i] == '"':
			s, esc, j := scanString(line, i)
			if j < 0 {
				return false
			}
			if esc {
				var ok bool
				if *buf, ok = unescape((*buf)[:0], s); !ok {
					return false
				}
				s = *buf
			}
			if field != nil {
				if !utf8.Valid(s) {
					return false
				}
				*field = string(s)
			}
			i = j
		default:
			j := i
			for j < len(line) && line[j] != ',' && line[j] != '}' && !isSpace(line[j]) {
				j++
			}
			lit := line[i:j]
			if !bytes.Equal(lit, []byte("null")) && (field != nil || !isLiteral(lit)) {
				return false
			}
			i = j
		}
		i = skipSpace(line, i)
		if i >= len(line) {
			return false
		}
		switch line[i] {
		case ',':
			i = skipSpace(line, i+1)
		case '}':
			return skipSpace(line, i+1) == len(line)
		default:
			return false
		}
	}
}

// field is the string field of ev a key names, as encoding/json matches
// keys (case folded), or nil.
func (ev *event) field(key []byte) *string {
	for _, c := range key {
		if c >= utf8.RuneSelf { // folds beyond ASCII ("ſ" is "s")
			return ev.fieldSlow(key)
		}
	}
	var name string
	var p *string
	switch len(key) {
	case 4:
		name, p = "Test", &ev.Test
	case 6:
		name, p = "Output", &ev.Output
		if key[0]|0x20 == 'a' {
			name, p = "Action", &ev.Action
		}
	case 7:
		name, p = "Package", &ev.Package
	case 10:
		name, p = "ImportPath", &ev.ImportPath
	case 11:
		name, p = "FailedBuild", &ev.FailedBuild
	default:
		return nil
	}
	if bytes.EqualFold(key, []byte(name)) {
		return p
	}
	return nil
}

func (ev *event) fieldSlow(key []byte) *string {
	for _, f := range [...]struct {
		name string
		p    *string
	}{
		{"Action", &ev.Action}, {"Package", &ev.Package}, {"Test", &ev.Test},
		{"Output", &ev.Output}, {"ImportPath", &ev.ImportPath}, {"FailedBuild", &ev.FailedBuild},
	} {
		if bytes.EqualFold(key, []byte(f.name)) {
			return f.p
		}
	}
	return nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// scanString reads the JSON string starting at b[i] ('"'): its content
// still escaped, whether it holds an escape, and the index after it; -1
// if it is not a string or holds a control character.
func scanString(b []byte, i int) (s []byte, esc bool, end int) {
	if i >= len(b) || b[i] != '"' {
		return nil, false, -1
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return b[i+1 : j], esc, j + 1
		case c == '\\':
			esc = true
			j++
		case c < 0x20:
			return nil, false, -1
		}
	}
	return nil, false, -1
}

// unescape appends the JSON string content s, unescaped, to buf, as
// encoding/json does (a lone surrogate becomes U+FFFD).
func unescape(buf, s []byte) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			buf = append(buf, c)
			continue
		}
		if i++; i >= len(s) {
			return buf, false
		}
		switch s[i] {
		case '"', '\\', '/':
			buf = append(buf, s[i])
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r := hex4(s[i+1:])
			if r < 0 {
				return buf, false
			}
			i += 4
			if utf16.IsSurrogate(r) {
				if i+2 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
					if r2 := hex4(s[i+3:]); r2 >= 0 {
						if d := utf16.DecodeRune(r, r2); d != unicode.ReplacementChar {
							buf = utf8.AppendRune(buf, d)
							i += 6
							continue
						}
					}
				}
				r = unicode.ReplacementChar
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return buf, false
		}
	}
	return buf, true
}

// hex4 reads the 4 hexadecimal digits at the start of s, or -1.
func hex4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// isLiteral reports whether b is a JSON number, true or false.
func isLiteral(b []byte) bool {
	if bytes.Equal(b, []byte("true")) || bytes.Equal(b, []byte("false")) {
		return true
	}
	i := 0
	digits := func() bool {
		start := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if !digits() {
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(b)
}

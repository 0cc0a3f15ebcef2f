package strictjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/runner-cli/runner/internal/fsutil"
)

// refParse is the first implementation of Parse, which built the Value
// tree with a recursive descent parser; the tests hold Parse and Scanner to
// its results and errors. maxDepth bounds the nesting
// of arrays and objects (0 means DefaultMaxDepth).
func refParse(data []byte, maxDepth int) (*Value, error) {
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	p := &refParser{data: data, maxDepth: maxDepth}
	p.skipSpace()
	if p.pos >= len(p.data) {
		return nil, p.errf("empty input: expected a JSON value")
	}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(p.data) {
		return nil, p.errf("unexpected %s after the JSON value", p.describe())
	}
	return v, nil
}

type refParser struct {
	data     []byte
	pos      int
	maxDepth int
}

func (p *refParser) errAt(off int, format string, args ...any) error {
	line, col := fsutil.LineCol(p.data, off)
	return &SyntaxError{Line: line, Col: col, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

func (p *refParser) errf(format string, args ...any) error {
	return p.errAt(p.pos, format, args...)
}

func (p *refParser) describe() string {
	if p.pos >= len(p.data) {
		return "end of input"
	}
	r, _ := utf8.DecodeRune(p.data[p.pos:])
	return strconv.QuoteRune(r)
}

func (p *refParser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *refParser) value(depth int) (*Value, error) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return nil, p.errf("unexpected end of input: expected a value")
	}
	start := p.pos
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return &Value{Kind: String, Offset: start, Str: s}, nil
	case c == 't':
		return p.literal("true", &Value{Kind: Bool, Offset: start, Bool: true})
	case c == 'f':
		return p.literal("false", &Value{Kind: Bool, Offset: start})
	case c == 'n':
		return p.literal("null", &Value{Kind: Null, Offset: start})
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		return nil, p.errf("unexpected %s: expected a value", p.describe())
	}
}

func (p *refParser) literal(word string, v *Value) (*Value, error) {
	if !bytes.HasPrefix(p.data[p.pos:], []byte(word)) {
		return nil, p.errf("invalid literal: expected %q", word)
	}
	p.pos += len(word)
	return v, nil
}

func (p *refParser) number() (*Value, error) {
	start := p.pos
	if p.data[p.pos] == '-' {
		p.pos++
	}
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.pos < len(p.data) && p.data[p.pos] == '0' {
		p.pos++
	} else if digits() == 0 {
		return nil, p.errf("invalid number")
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return nil, p.errf("invalid number: digits expected after the decimal point")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.errf("invalid number: digits expected in the exponent")
		}
	}
	return &Value{Kind: Number, Offset: start, Str: string(p.data[start:p.pos])}, nil
}

func (p *refParser) str() (string, error) {
	start := p.pos
	p.pos++ // opening quote
	plain := true
	for {
		if p.pos >= len(p.data) {
			return "", p.errAt(start, "unterminated string")
		}
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			if plain {
				return string(p.data[start+1 : p.pos-1]), nil
			}
			var s string
			if err := json.Unmarshal(p.data[start:p.pos], &s); err != nil {
				return "", p.errAt(start, "invalid string: %v", err)
			}
			return s, nil
		case c == '\\':
			plain = false
			if p.pos+1 >= len(p.data) {
				return "", p.errAt(start, "unterminated string")
			}
			switch p.data[p.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.pos += 2
			case 'u':
				if p.pos+6 > len(p.data) {
					return "", p.errf("invalid \\u escape")
				}
				for _, h := range p.data[p.pos+2 : p.pos+6] {
					if !isHex(h) {
						return "", p.errf("invalid \\u escape")
					}
				}
				p.pos += 6
			default:
				return "", p.errf("invalid escape sequence")
			}
		case c < 0x20:
			return "", p.errf("control character in string: escape it")
		case c < utf8.RuneSelf:
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			if r == utf8.RuneError && size <= 1 {
				return "", p.errf("invalid UTF-8 in string")
			}
			p.pos += size
		}
	}
}

func (p *refParser) array(depth int) (*Value, error) {
	if depth > p.maxDepth {
		return nil, p.errf("nesting deeper than %d levels", p.maxDepth)
	}
	v := &Value{Kind: Array, Offset: p.pos}
	p.pos++
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return v, nil
	}
	for {
		elem, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		v.Array = append(v.Array, elem)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.errf("unexpected end of input: expected ',' or ']'")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return v, nil
		default:
			return nil, p.errf("unexpected %s: expected ',' or ']'", p.describe())
		}
	}
}

func (p *refParser) object(depth int) (*Value, error) {
	if depth > p.maxDepth {
		return nil, p.errf("nesting deeper than %d levels", p.maxDepth)
	}
	v := &Value{Kind: Object, Offset: p.pos}
	p.pos++
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return v, nil
	}
	var seen map[string]struct{}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.errf("unexpected %s: expected a quoted object key", p.describe())
		}
		keyOff := p.pos
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if len(v.Members) >= 8 && seen == nil {
			seen = make(map[string]struct{}, 16)
			for _, m := range v.Members {
				seen[m.Key] = struct{}{}
			}
		}
		dup := false
		if seen != nil {
			_, dup = seen[key]
			seen[key] = struct{}{}
		} else {
			for _, m := range v.Members {
				if m.Key == key {
					dup = true
					break
				}
			}
		}
		if dup {
			return nil, p.errAt(keyOff, "duplicate key %q", key)
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.errf("unexpected %s: expected ':' after object key", p.describe())
		}
		p.pos++
		elem, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		v.Members = append(v.Members, Member{Key: key, KeyOffset: keyOff, Value: elem})
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.errf("unexpected end of input: expected ',' or '}'")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return v, nil
		default:
			return nil, p.errf("unexpected %s: expected ',' or '}'", p.describe())
		}
	}
}

package strictjson

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/runner-cli/runner/internal/fsutil"
)

// Scanner reads one JSON document value by value, applying every check of
// Parse (syntax, duplicate keys, nesting depth) without building a Value
// tree: a caller that converts the document into its own types as it goes
// allocates only what it keeps. Errors are *SyntaxError, the same ones
// Parse returns for the same input, and the first one in document order
// is reported.
//
// A document is read with one call that reads a value (String, Number,
// Bool, Null, Skip, Object, Array or Value), then End. Peek says what the
// next value is before it is read.
type Scanner struct {
	data     []byte
	pos      int
	maxDepth int
	depth    int        // containers open around the next value
	started  bool       // Peek or a read has looked at the document
	keys     []keySet   // by depth: the keys of the object being read there
	elems    [][]*Value // by depth: scratch for Value's arrays
	members  [][]Member // by depth: scratch for Value's objects
}

// keySet holds the keys of one object for the duplicate check: a list
// while it is short, a map beyond that.
type keySet struct {
	list [][]byte
	m    map[string]struct{}
}

// NewScanner returns a scanner over data. maxDepth bounds the nesting of
// arrays and objects (0 means DefaultMaxDepth).
func NewScanner(data []byte, maxDepth int) *Scanner {
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	return &Scanner{data: data, maxDepth: maxDepth}
}

func (s *Scanner) errAt(off int, msg string) error {
	line, col := fsutil.LineCol(s.data, off)
	return &SyntaxError{Line: line, Col: col, Offset: off, Msg: msg}
}

func (s *Scanner) errf(msg string) error { return s.errAt(s.pos, msg) }

func (s *Scanner) describe() string {
	if s.pos >= len(s.data) {
		return "end of input"
	}
	r, _ := utf8.DecodeRune(s.data[s.pos:])
	return strconv.QuoteRune(r)
}

func (s *Scanner) skipSpace() {
	data, pos := s.data, s.pos
	for pos < len(data) && isSpace[data[pos]] {
		pos++
	}
	s.pos = pos
}

// isSpace marks JSON white space.
var isSpace = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}

// isPlain marks the bytes a string holds as they are: printable ASCII
// other than '"' and '\\'.
var isPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// Peek skips white space and reports the kind of the next value and the
// byte offset where it starts, without reading it. At the end of the
// input, or at a character that starts no value, it returns the error
// reading the value would give.
func (s *Scanner) Peek() (Kind, int, error) {
	s.skipSpace()
	if s.pos >= len(s.data) {
		if !s.started {
			s.started = true
			return 0, s.pos, s.errf("empty input: expected a JSON value")
		}
		return 0, s.pos, s.errf("unexpected end of input: expected a value")
	}
	s.started = true
	switch c := s.data[s.pos]; {
	case c == '{':
		return Object, s.pos, nil
	case c == '[':
		return Array, s.pos, nil
	case c == '"':
		return String, s.pos, nil
	case c == 't' || c == 'f':
		return Bool, s.pos, nil
	case c == 'n':
		return Null, s.pos, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return Number, s.pos, nil
	}
	return 0, s.pos, s.errf("unexpected " + s.describe() + ": expected a value")
}

// expect peeks and checks that the next value is of kind k.
func (s *Scanner) expect(k Kind) error {
	got, _, err := s.Peek()
	if err != nil {
		return err
	}
	if got != k {
		return s.errf("unexpected " + got.String() + ": expected " + k.String())
	}
	return nil
}

// End checks that nothing but white space follows the value read.
func (s *Scanner) End() error {
	s.skipSpace()
	if s.pos < len(s.data) {
		return s.errf("unexpected " + s.describe() + " after the JSON value")
	}
	return nil
}

// String reads a string value and returns it decoded.
func (s *Scanner) String() (string, error) {
	if err := s.expect(String); err != nil {
		return "", err
	}
	raw, escaped, err := s.scanString()
	if err != nil {
		return "", err
	}
	if !escaped {
		return string(raw), nil
	}
	return s.unescape(raw)
}

// Number reads a number and returns its literal text.
func (s *Scanner) Number() (string, error) {
	if err := s.expect(Number); err != nil {
		return "", err
	}
	start := s.pos
	if err := s.scanNumber(); err != nil {
		return "", err
	}
	return string(s.data[start:s.pos]), nil
}

// Bool reads true or false.
func (s *Scanner) Bool() (bool, error) {
	if err := s.expect(Bool); err != nil {
		return false, err
	}
	if s.data[s.pos] == 't' {
		return true, s.literal("true")
	}
	return false, s.literal("false")
}

// Null reads null.
func (s *Scanner) Null() error {
	if err := s.expect(Null); err != nil {
		return err
	}
	return s.literal("null")
}

// Skip reads the next value, whatever it is, checking it like any other.
func (s *Scanner) Skip() error {
	k, _, err := s.Peek()
	if err != nil {
		return err
	}
	switch k {
	case Object:
		return s.Object(nil)
	case Array:
		return s.Array(nil)
	case String:
		raw, escaped, err := s.scanString()
		if err == nil && escaped {
			_, err = s.unescape(raw)
		}
		return err
	case Number:
		return s.scanNumber()
	case Bool:
		if s.data[s.pos] == 't' {
			return s.literal("true")
		}
		return s.literal("false")
	default:
		return s.literal("null")
	}
}

// Object reads an object, calling member for each of its members in
// document order with the decoded key (valid only during the call) and
// the key's byte offset. member reads the member's value with the
// scanner; a value it leaves unread is skipped. An error member returns
// ends the reading and is returned. A nil member skips every value.
func (s *Scanner) Object(member func(key []byte, keyOff int) error) error {
	if err := s.expect(Object); err != nil {
		return err
	}
	if s.depth+1 > s.maxDepth {
		return s.errf("nesting deeper than " + strconv.Itoa(s.maxDepth) + " levels")
	}
	s.depth++
	defer func() { s.depth-- }()
	d := s.depth
	for len(s.keys) <= d {
		s.keys = append(s.keys, keySet{})
	}
	s.keys[d].list = s.keys[d].list[:0]
	s.keys[d].m = nil
	s.pos++
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return nil
	}
	for {
		s.skipSpace()
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			return s.errf("unexpected " + s.describe() + ": expected a quoted object key")
		}
		keyOff := s.pos
		raw, escaped, err := s.scanString()
		if err != nil {
			return err
		}
		key := raw
		if escaped {
			k, err := s.unescape(raw)
			if err != nil {
				return err
			}
			key = []byte(k) // kept by the duplicate check, so not a shared buffer
		}
		if s.keys[d].seen(key) {
			return s.errAt(keyOff, "duplicate key "+strconv.Quote(string(key)))
		}
		s.skipSpace()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return s.errf("unexpected " + s.describe() + ": expected ':' after object key")
		}
		s.pos++
		if err := s.element(func() error { return member(key, keyOff) }, member == nil); err != nil {
			return err
		}
		s.skipSpace()
		if s.pos >= len(s.data) {
			return s.errf("unexpected end of input: expected ',' or '}'")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		default:
			return s.errf("unexpected " + s.describe() + ": expected ',' or '}'")
		}
	}
}

// Array reads an array, calling elem for each element with its index.
// elem reads the element with the scanner; an element it leaves unread is
// skipped. An error elem returns ends the reading and is returned. A nil
// elem skips every element.
func (s *Scanner) Array(elem func(i int) error) error {
	if err := s.expect(Array); err != nil {
		return err
	}
	if s.depth+1 > s.maxDepth {
		return s.errf("nesting deeper than " + strconv.Itoa(s.maxDepth) + " levels")
	}
	s.depth++
	defer func() { s.depth-- }()
	s.pos++
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		return nil
	}
	for i := 0; ; i++ {
		if err := s.element(func() error { return elem(i) }, elem == nil); err != nil {
			return err
		}
		s.skipSpace()
		if s.pos >= len(s.data) {
			return s.errf("unexpected end of input: expected ',' or ']'")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return nil
		default:
			return s.errf("unexpected " + s.describe() + ": expected ',' or ']'")
		}
	}
}

// element reads one member value or array element through read, or
// skips it when skip is set or read left it unread.
func (s *Scanner) element(read func() error, skip bool) error {
	if !skip {
		// The value must start where it can be read: a missing value is
		// an error here, whatever read does.
		if _, _, err := s.Peek(); err != nil {
			return err
		}
		start := s.pos
		if err := read(); err != nil {
			return err
		}
		if s.pos != start {
			return nil
		}
	}
	return s.Skip()
}

// seen reports whether key was already in the set, adding it.
func (ks *keySet) seen(key []byte) bool {
	if ks.m != nil {
		if _, dup := ks.m[string(key)]; dup {
			return true
		}
		ks.m[string(key)] = struct{}{}
		return false
	}
	for _, k := range ks.list {
		if bytes.Equal(k, key) {
			return true
		}
	}
	if len(ks.list) < 8 {
		ks.list = append(ks.list, key)
		return false
	}
	ks.m = make(map[string]struct{}, 16)
	for _, k := range ks.list {
		ks.m[string(k)] = struct{}{}
	}
	ks.m[string(key)] = struct{}{}
	return false
}

func (s *Scanner) literal(word string) error {
	if !bytes.HasPrefix(s.data[s.pos:], []byte(word)) {
		return s.errf("invalid literal: expected " + strconv.Quote(word))
	}
	s.pos += len(word)
	return nil
}

func (s *Scanner) scanNumber() error {
	if s.data[s.pos] == '-' {
		s.pos++
	}
	digits := func() int {
		n := 0
		for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
			s.pos++
			n++
		}
		return n
	}
	if s.pos < len(s.data) && s.data[s.pos] == '0' {
		s.pos++
	} else if digits() == 0 {
		return s.errf("invalid number")
	}
	if s.pos < len(s.data) && s.data[s.pos] == '.' {
		s.pos++
		if digits() == 0 {
			return s.errf("invalid number: digits expected after the decimal point")
		}
	}
	if s.pos < len(s.data) && (s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		s.pos++
		if s.pos < len(s.data) && (s.data[s.pos] == '+' || s.data[s.pos] == '-') {
			s.pos++
		}
		if digits() == 0 {
			return s.errf("invalid number: digits expected in the exponent")
		}
	}
	return nil
}

// scanString checks the string at s.pos and moves past it. It returns the
// text between the quotes and whether it holds escapes (then unescape
// decodes it).
func (s *Scanner) scanString() (raw []byte, escaped bool, err error) {
	start := s.pos
	s.pos++ // opening quote
	for {
		// The common case: a run of plain ASCII.
		data, pos := s.data, s.pos
		for pos < len(data) && isPlain[data[pos]] {
			pos++
		}
		s.pos = pos
		if s.pos >= len(s.data) {
			return nil, false, s.errAt(start, "unterminated string")
		}
		switch c := s.data[s.pos]; {
		case c == '"':
			s.pos++
			return s.data[start+1 : s.pos-1], escaped, nil
		case c == '\\':
			escaped = true
			if s.pos+1 >= len(s.data) {
				return nil, false, s.errAt(start, "unterminated string")
			}
			switch s.data[s.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.pos += 2
			case 'u':
				if s.pos+6 > len(s.data) {
					return nil, false, s.errf("invalid \\u escape")
				}
				for _, h := range s.data[s.pos+2 : s.pos+6] {
					if !isHex(h) {
						return nil, false, s.errf("invalid \\u escape")
					}
				}
				s.pos += 6
			default:
				return nil, false, s.errf("invalid escape sequence")
			}
		case c < 0x20:
			return nil, false, s.errf("control character in string: escape it")
		default:
			r, size := utf8.DecodeRune(s.data[s.pos:])
			if r == utf8.RuneError && size <= 1 {
				return nil, false, s.errf("invalid UTF-8 in string")
			}
			s.pos += size
		}
	}
}

// unescape decodes the checked text of a string that holds escapes, as
// encoding/json does (an unpaired surrogate becomes U+FFFD).
func (s *Scanner) unescape(raw []byte) (string, error) {
	start := s.pos - len(raw) - 2
	quoted := s.data[start:s.pos]
	var str string
	if err := json.Unmarshal(quoted, &str); err != nil {
		return "", s.errAt(start, "invalid string: "+err.Error())
	}
	return str, nil
}

// Value reads the next value into a Value tree.
func (s *Scanner) Value() (*Value, error) {
	k, off, err := s.Peek()
	if err != nil {
		return nil, err
	}
	switch k {
	case Object:
		v := &Value{Kind: Object, Offset: off}
		d := s.depth + 1
		for len(s.members) <= d {
			s.members = append(s.members, nil)
		}
		scratch := s.members[d][:0]
		err := s.Object(func(key []byte, keyOff int) error {
			elem, err := s.Value()
			if err != nil {
				return err
			}
			scratch = append(scratch, Member{Key: string(key), KeyOffset: keyOff, Value: elem})
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(scratch) > 0 {
			v.Members = append([]Member(nil), scratch...)
		}
		clear(scratch)
		s.members[d] = scratch[:0]
		return v, nil
	case Array:
		v := &Value{Kind: Array, Offset: off}
		d := s.depth + 1
		for len(s.elems) <= d {
			s.elems = append(s.elems, nil)
		}
		scratch := s.elems[d][:0]
		err := s.Array(func(int) error {
			elem, err := s.Value()
			if err != nil {
				return err
			}
			scratch = append(scratch, elem)
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(scratch) > 0 {
			v.Array = append([]*Value(nil), scratch...)
		}
		clear(scratch)
		s.elems[d] = scratch[:0]
		return v, nil
	case String:
		str, err := s.String()
		if err != nil {
			return nil, err
		}
		return &Value{Kind: String, Offset: off, Str: str}, nil
	case Number:
		num, err := s.Number()
		if err != nil {
			return nil, err
		}
		return &Value{Kind: Number, Offset: off, Str: num}, nil
	case Bool:
		b, err := s.Bool()
		if err != nil {
			return nil, err
		}
		return &Value{Kind: Bool, Offset: off, Bool: b}, nil
	default:
		if err := s.Null(); err != nil {
			return nil, err
		}
		return &Value{Kind: Null, Offset: off}, nil
	}
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

package strictjson

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// ErrorOf words an error of the library, met while dec read data, as a
// *SyntaxError: where it is and what was expected there, in the words of
// the runner's messages ("unexpected '}': expected a quoted object key").
// Errors that are not the library's are returned as they are.
func ErrorOf(data []byte, dec *jsontext.Decoder, err error) error {
	var se *SyntaxError
	var syn *jsontext.SyntacticError
	var sem *json.SemanticError
	switch {
	case errors.As(err, &se):
		return se
	case errors.Is(err, io.EOF) && !errors.As(err, &syn):
		// The decoder found no value at all.
		return errAt(data, len(data), "empty input: expected a JSON value")
	case errors.As(err, &syn):
		off, msg := syntaxMessage(data, dec, syn)
		return errAt(data, off, msg)
	case errors.As(err, &sem):
		return semanticError(data, sem)
	}
	return err
}

// syntaxMessage places and words a syntax error. The decoder stopped at
// the last token it read whole; the grammar at that point says what was
// expected next, and the library's error says what is wrong inside a
// token (a string, number or literal). Errors inside a string are told
// apart by the library's words; TestDecodeSyntaxErrors pins each message,
// so a version of the library that words them otherwise shows there.
func syntaxMessage(data []byte, dec *jsontext.Decoder, e *jsontext.SyntacticError) (int, string) {
	off := int(e.ByteOffset)
	if errors.Is(e.Err, io.ErrUnexpectedEOF) {
		off = len(data)
	}
	text := ""
	if e.Err != nil {
		text = e.Err.Error()
	}
	switch {
	case errors.Is(e.Err, jsontext.ErrDuplicateName):
		return off, DuplicateError(data, off, e.JSONPointer.LastToken()).Msg
	case strings.HasPrefix(text, "invalid escape sequence"), strings.HasPrefix(text, "invalid surrogate pair"):
		if off+1 < len(data) && data[off+1] == 'u' {
			return off, `invalid \u escape`
		}
		return off, "invalid escape sequence"
	case strings.HasSuffix(text, "in string (expecting non-control character)"):
		return off, "control character in string: escape it"
	}
	pos, problem := expected(data, dec)
	if problem != "" {
		return pos, problem
	}
	// The next token starts where a value may start: the problem is inside
	// it.
	switch c := data[pos]; {
	case c == '"':
		return stringEnd(data, pos)
	case c == 't':
		return pos, `invalid literal: expected "true"`
	case c == 'f':
		return pos, `invalid literal: expected "false"`
	case c == 'n':
		return pos, `invalid literal: expected "null"`
	case c == '-' || (c >= '0' && c <= '9'):
		return numberMessage(data, pos, off)
	}
	return off, strings.TrimPrefix(e.Error(), "jsontext: ")
}

// expected follows the grammar from where dec stopped to the start of the
// next token. It returns that offset, and the problem when the token there
// is not one the grammar allows; "" when it may start a value (or name).
func expected(data []byte, dec *jsontext.Decoder) (int, string) {
	pos := skipSpace(data, int(dec.InputOffset()))
	depth := dec.StackDepth()
	kind, length := dec.StackIndex(depth)
	unexpected := func(want string) (int, string) {
		return pos, "unexpected " + describe(data, pos) + ": expected " + want
	}
	at := func(c byte) bool { return pos < len(data) && data[pos] == c }
	switch {
	case depth == 0 && length > 0:
		return pos, "unexpected " + describe(data, pos) + " after the JSON value"
	case depth == 0 && pos == len(data):
		return pos, "empty input: expected a JSON value"
	case kind == jsontext.KindBeginObject && length%2 == 1: // after a name
		if !at(':') {
			return unexpected("':' after object key")
		}
		pos = skipSpace(data, pos+1)
	case kind == jsontext.KindBeginObject:
		if length > 0 {
			if !at(',') {
				return unexpected("',' or '}'")
			}
			pos = skipSpace(data, pos+1)
		}
		if !at('"') {
			return unexpected("a quoted object key")
		}
		return pos, ""
	case kind == jsontext.KindBeginArray && length > 0:
		if !at(',') {
			return unexpected("',' or ']'")
		}
		pos = skipSpace(data, pos+1)
	}
	if pos == len(data) || !startsValue(data[pos]) {
		return unexpected("a value")
	}
	return pos, ""
}

// stringEnd words the string at start that the input ends in: cut in a
// \u escape, or unterminated.
func stringEnd(data []byte, start int) (int, string) {
	for i := start + 1; i < len(data); i++ {
		if data[i] == '\\' {
			if i+1 < len(data) && data[i+1] == 'u' && i+6 > len(data) {
				return i, `invalid \u escape`
			}
			i++
		}
	}
	return start, "unterminated string"
}

// numberMessage words the error in the number starting at start; off is
// where the library found it wrong.
func numberMessage(data []byte, start, off int) (int, string) {
	if off <= start || off > len(data) {
		off = start + 1
	}
	switch data[off-1] {
	case '.':
		return off, "invalid number: digits expected after the decimal point"
	case 'e', 'E', '+':
		return off, "invalid number: digits expected in the exponent"
	case '-':
		if off-1 > start {
			return off, "invalid number: digits expected in the exponent"
		}
	}
	return off, "invalid number"
}

// semanticError words a value that does not fit the Go value it is
// decoded into.
func semanticError(data []byte, e *json.SemanticError) *SyntaxError {
	off := int(e.ByteOffset)
	field := strings.ReplaceAll(strings.TrimPrefix(string(e.JSONPointer), "/"), "/", ".")
	if errors.Is(e.Err, json.ErrUnknownName) {
		name := e.JSONPointer.LastToken()
		se := errAt(data, nameOffset(data, off, name), "unknown field "+strconv.Quote(name))
		se.placeLast = true
		return se
	}
	var msg string
	if e.Err != nil && e.JSONKind != '0' {
		msg = e.Err.Error()
	} else {
		found := KindName(e.JSONKind)
		if e.JSONKind == '0' {
			found += " " + numberAt(data, skipSpace(data, off))
		}
		msg = "expected " + goType(e) + ", found " + found
	}
	if field != "" {
		msg = "field " + strconv.Quote(field) + ": " + msg
	}
	return errAt(data, skipSpace(data, off), msg)
}

// nameOffset finds the quoted name that ends at or before off.
func nameOffset(data []byte, off int, name string) int {
	quoted := strconv.Quote(name)
	for i := min(off, len(data)); i >= 0; i-- {
		if strings.HasPrefix(string(data[i:min(len(data), i+len(quoted))]), quoted) {
			return i
		}
		if off-i > 2*len(name)+16 {
			break // an escaped name: its place is near enough
		}
	}
	return off
}

func goType(e *json.SemanticError) string {
	if e.GoType == nil {
		return "a different value"
	}
	return e.GoType.String()
}

// numberAt returns the number literal at off, shortened.
func numberAt(data []byte, off int) string {
	end := off
	for end < len(data) && end-off < 32 && strings.IndexByte("+-.eE0123456789", data[end]) >= 0 {
		end++
	}
	return string(data[off:end])
}

// KindName names a JSON kind in messages: "string", "number", "boolean",
// "null", "array" or "object".
func KindName(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 't', 'f':
		return "boolean"
	case '"':
		return "string"
	case '0':
		return "number"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "value"
}

func skipSpace(data []byte, pos int) int {
	for pos < len(data) && (data[pos] == ' ' || data[pos] == '\t' || data[pos] == '\n' || data[pos] == '\r') {
		pos++
	}
	return pos
}

func startsValue(c byte) bool {
	return c == '{' || c == '[' || c == '"' || c == 't' || c == 'f' || c == 'n' || c == '-' || (c >= '0' && c <= '9')
}

// describe names the character at off, or the end of the input.
func describe(data []byte, off int) string {
	if off >= len(data) {
		return "end of input"
	}
	r, _ := utf8.DecodeRune(data[off:])
	return strconv.QuoteRune(r)
}

// Package strictjson reads the runner's JSON files the way they must be
// read: strictly (one value, nothing after it), refusing duplicate object
// keys, unknown fields and excessive nesting, with every error at a line
// and column. The reading itself is github.com/go-json-experiment/json
// (the code of encoding/json/v2); this package holds the options the
// runner reads with, the nesting bound, and the wording of the errors.
package strictjson

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/runner-cli/runner/internal/fsutil"
)

// DefaultMaxDepth bounds nesting when a caller passes 0.
const DefaultMaxDepth = 512

// SyntaxError is a problem at a line and column of the input: a syntax
// error, or a value that does not fit what it is decoded into.
type SyntaxError struct {
	Line, Col int
	Offset    int
	Msg       string
	// placeLast puts the line and column after the message, as unknown
	// fields are reported: unknown field "x" (line 1, column 5).
	placeLast bool
}

func (e *SyntaxError) Error() string {
	if e.placeLast {
		return fmt.Sprintf("%s (line %d, column %d)", e.Msg, e.Line, e.Col)
	}
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Col, e.Msg)
}

// errAt returns the SyntaxError msg at byte offset off of data.
func errAt(data []byte, off int, msg string) *SyntaxError {
	line, col := fsutil.LineCol(data, off)
	return &SyntaxError{Line: line, Col: col, Offset: off, Msg: msg}
}

// readOptions are the decoder options of every strict read. Duplicate
// names are refused (the library's default). Escaped lone surrogates
// ("\ud800") read as U+FFFD, as encoding/json reads them; raw invalid
// UTF-8 is refused before the library sees the input (CheckUTF8), so
// AllowInvalidUTF8 only lets those escapes through.
var readOptions = jsontext.AllowInvalidUTF8(true)

// NewDecoder returns a decoder of data with the options of every strict
// read, then opts. The caller checks data with CheckUTF8 first.
func NewDecoder(data []byte, opts ...jsontext.Options) *jsontext.Decoder {
	return jsontext.NewDecoder(bytes.NewBuffer(data), append([]jsontext.Options{readOptions}, opts...)...)
}

// CheckUTF8 refuses data that is not valid UTF-8, at the first bad byte.
func CheckUTF8(data []byte) error {
	if utf8.Valid(data) {
		return nil
	}
	off := 0
	for off < len(data) {
		r, size := utf8.DecodeRune(data[off:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		off += size
	}
	return errAt(data, off, "invalid UTF-8")
}

// Decode decodes data, exactly one JSON value, into v: duplicate keys,
// fields v does not have, values of the wrong type, nesting deeper than
// maxDepth (0 means DefaultMaxDepth) and anything after the value are
// errors, each a *SyntaxError. The first problem in the document is
// reported; nesting too deep is reported before a value of the wrong type,
// wherever it is.
func Decode(data []byte, v any, maxDepth int) error {
	if err := CheckUTF8(data); err != nil {
		return err
	}
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	deep := DeeperThan(data, maxDepth)
	dec := NewDecoder(data)
	err := json.UnmarshalDecode(dec, v, json.RejectUnknownMembers(true))
	if err == nil {
		err = End(data, dec)
	}
	if deep >= 0 && !syntaxErrorBefore(err, deep) {
		return DepthError(data, deep, maxDepth)
	}
	if err != nil {
		return ErrorOf(data, dec, err)
	}
	return nil
}

// syntaxErrorBefore reports whether err is a syntax error of the library
// before offset off: one the nesting check, which assumes valid syntax up
// to off, does not hide.
func syntaxErrorBefore(err error, off int) bool {
	var serr *jsontext.SyntacticError
	return errors.As(err, &serr) && int(serr.ByteOffset) <= off
}

// End checks that nothing but white space follows the value dec read.
func End(data []byte, dec *jsontext.Decoder) error {
	off := int(dec.InputOffset())
	off += len(data[off:]) - len(bytes.TrimLeft(data[off:], " \t\r\n"))
	if off < len(data) {
		return errAt(data, off, "unexpected "+describe(data, off)+" after the JSON value")
	}
	return nil
}

// DuplicateError is the error for the second key named key, at off.
func DuplicateError(data []byte, off int, key string) *SyntaxError {
	return errAt(data, off, "duplicate key "+strconv.Quote(key))
}

// DepthError is the error for the array or object at off, which nests
// deeper than maxDepth.
func DepthError(data []byte, off, maxDepth int) *SyntaxError {
	return errAt(data, off, "nesting deeper than "+strconv.Itoa(maxDepth)+" levels")
}

// DeeperThan returns the offset of the first array or object nested
// deeper than maxDepth in the JSON value data starts with, or -1 when
// there is none before the value ends. It only counts brackets outside
// strings: where data is not valid JSON, a decoder says more.
func DeeperThan(data []byte, maxDepth int) int {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '{', '[':
			if depth++; depth > maxDepth {
				return i
			}
		case '}', ']':
			if depth--; depth <= 0 {
				return -1
			}
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		}
	}
	return -1
}

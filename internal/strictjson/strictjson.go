// Package strictjson parses JSON the way the runner's input files must be
// read: strictly (one value, nothing after it), refusing duplicate object
// keys and excessive nesting, and keeping the byte offset of every value
// so that callers can report errors by line and column.
package strictjson

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/runner-cli/runner/internal/fsutil"
)

// DefaultMaxDepth bounds nesting when a caller passes 0.
const DefaultMaxDepth = 512

// Kind is the JSON type of a Value.
type Kind int

// The kinds of JSON value.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

func (k Kind) String() string {
	return [...]string{"null", "boolean", "number", "string", "array", "object"}[k]
}

// Member is one key/value pair of an object, in document order.
type Member struct {
	Key       string
	KeyOffset int
	Value     *Value
}

// Value is a parsed JSON value with its position in the input.
type Value struct {
	Kind    Kind
	Offset  int // byte offset of the value's first character
	Bool    bool
	Str     string // String: the decoded string; Number: the literal
	Array   []*Value
	Members []Member
}

// Get returns the member named key of an object, or nil.
func (v *Value) Get(key string) *Value {
	for i := range v.Members {
		if v.Members[i].Key == key {
			return v.Members[i].Value
		}
	}
	return nil
}

// SyntaxError is a parse failure at a line and column.
type SyntaxError struct {
	Line, Col int
	Offset    int
	Msg       string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Col, e.Msg)
}

// Parse parses data as exactly one JSON value. maxDepth bounds the nesting
// of arrays and objects (0 means DefaultMaxDepth).
func Parse(data []byte, maxDepth int) (*Value, error) {
	s := NewScanner(data, maxDepth)
	v, err := s.Value()
	if err != nil {
		return nil, err
	}
	if err := s.End(); err != nil {
		return nil, err
	}
	return v, nil
}

// Check applies every check of Parse to data without building a Value.
func Check(data []byte, maxDepth int) error {
	s := NewScanner(data, maxDepth)
	if err := s.Skip(); err != nil {
		return err
	}
	return s.End()
}

// Decode checks data like Parse (duplicate keys, depth, syntax) and then
// decodes it into v, refusing fields v does not have.
func Decode(data []byte, v any, maxDepth int) error {
	if err := Check(data, maxDepth); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if te, ok := err.(*json.UnmarshalTypeError); ok {
			line, col := fsutil.LineCol(data, int(te.Offset))
			return &SyntaxError{Line: line, Col: col, Offset: int(te.Offset),
				Msg: fmt.Sprintf("field %q: expected %s, found %s", te.Field, te.Type, te.Value)}
		}
		return err
	}
	return nil
}

package tree

import (
	"bytes"
	"errors"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/runner-cli/runner/internal/strictjson"
)

// The token-level reading of Parse: the JSON decoder checks the syntax
// and UTF-8; these helpers add the offset of each value (from the end of
// what was read and its length) and the nesting bound (MaxJSONDepth).
// Duplicate keys are found by the reader of each object: a node's known
// fields are a bit set already, which costs less than the decoder's
// check of every name.

// treeDecoderOptions leave duplicate names to the parser (see above).
var treeDecoderOptions = jsontext.AllowDuplicateNames(true)

// keySet holds the names read in one object, for the duplicate check of
// the names that are not fields of a node.
type keySet map[string]struct{}

// add adds key, or returns the error for a duplicate key at off.
func (p *treeParser) add(ks *keySet, key string, off int) error {
	if *ks == nil {
		*ks = keySet{}
	}
	if _, dup := (*ks)[key]; dup {
		return strictjson.DuplicateError(p.data, off, key)
	}
	(*ks)[key] = struct{}{}
	return nil
}

// peek reports the kind of the next value without reading it; at a
// syntax error it returns the error.
func (p *treeParser) peek() (jsontext.Kind, error) {
	kind := p.d.PeekKind()
	if kind == jsontext.KindInvalid {
		_, err := p.d.ReadToken() // the error PeekKind met
		return 0, err
	}
	return kind, nil
}

// scalar reads the next value, a string, number or literal, and returns
// its text as it is in the file and its offset.
func (p *treeParser) scalar() ([]byte, int, error) {
	v, err := p.d.ReadValue()
	if err != nil {
		return nil, 0, err
	}
	return v, int(p.d.InputOffset()) - len(v), nil
}

// str reads a string value and returns it decoded, and its offset.
func (p *treeParser) str() (string, int, error) {
	v, off, err := p.scalar()
	if err != nil {
		return "", 0, err
	}
	return unquote(v), off, nil
}

// unquote decodes a string the decoder has checked. An escaped lone
// surrogate becomes U+FFFD, as in encoding/json.
func unquote(v []byte) string {
	if raw := v[1 : len(v)-1]; bytes.IndexByte(raw, '\\') < 0 {
		return string(raw)
	}
	b, _ := jsontext.AppendUnquote(nil, v)
	return string(b)
}

// open reads the '{' or '[' that comes next, within the nesting bound,
// and returns its offset.
func (p *treeParser) open() (int, error) {
	if p.d.StackDepth() >= MaxJSONDepth {
		return 0, strictjson.DepthError(p.data, p.next(), MaxJSONDepth)
	}
	if _, err := p.d.ReadToken(); err != nil {
		return 0, err
	}
	return int(p.d.InputOffset()) - 1, nil
}

// next is the offset of the token after the last one read: past white
// space and the ',' or ':' before it (checked by the decoder's PeekKind).
func (p *treeParser) next() int {
	data, pos := p.data, int(p.d.InputOffset())
	for pos < len(data) && strings.IndexByte(" \t\n\r,:", data[pos]) >= 0 {
		pos++
	}
	return pos
}

// object reads the object that comes next, calling member for each
// member (see members), and returns its offset.
func (p *treeParser) object(member func(key []byte, keyOff int) error) (int, error) {
	off, err := p.open()
	if err != nil {
		return 0, err
	}
	return off, p.members(member)
}

// members reads the members of the object just opened, calling member
// for each with its name, decoded (valid only during the call), and the
// name's offset. member reads the value, or skips it.
func (p *treeParser) members(member func(key []byte, keyOff int) error) error {
	for {
		switch p.d.PeekKind() {
		case jsontext.KindEndObject:
			_, err := p.d.ReadToken()
			return err
		case jsontext.KindString:
		default: // not a name: the decoder says what is wrong
			if _, err := p.d.ReadToken(); err != nil {
				return err
			}
			return errors.New("the JSON decoder read a value where a name belongs")
		}
		name, keyOff, err := p.scalar()
		if err != nil {
			return err
		}
		key := name[1 : len(name)-1]
		if _, field := lookupKeyBytes(key); !field && bytes.IndexByte(key, '\\') >= 0 {
			key = []byte(unquote(name))
		}
		if err := member(key, keyOff); err != nil {
			return err
		}
	}
}

// array reads the array that comes next, calling elem for each element
// with its index. elem reads the element, or skips it.
func (p *treeParser) array(elem func(k int) error) error {
	if _, err := p.open(); err != nil {
		return err
	}
	for k := 0; ; k++ {
		if p.d.PeekKind() == jsontext.KindEndArray {
			_, err := p.d.ReadToken()
			return err
		}
		if err := elem(k); err != nil {
			return err
		}
	}
}

// skip reads the next value, whatever it is, within the nesting bound
// and without duplicate keys, and returns its offset.
func (p *treeParser) skip() (int, error) {
	depth, start := p.d.StackDepth(), -1
	var names []keySet // by nesting below depth: the objects being read
	for {
		off, err := 0, error(nil)
		switch kind := p.d.PeekKind(); kind {
		case jsontext.KindBeginObject, jsontext.KindBeginArray:
			off, err = p.open()
			if kind == jsontext.KindBeginObject {
				names = append(names, nil)
			}
		case jsontext.KindEndObject, jsontext.KindEndArray, jsontext.KindInvalid:
			_, err = p.d.ReadToken()
			if kind == jsontext.KindEndObject && err == nil {
				names = names[:len(names)-1]
			}
		default:
			in, n := p.d.StackIndex(p.d.StackDepth())
			isName := p.d.StackDepth() > depth && in == jsontext.KindBeginObject && n%2 == 0
			var raw []byte
			if raw, off, err = p.scalar(); err == nil && isName {
				err = p.add(&names[len(names)-1], unquote(raw), off)
			}
		}
		if err != nil {
			return 0, err
		}
		if start < 0 {
			start = off
		}
		if p.d.StackDepth() == depth {
			return start, nil
		}
	}
}

package tree

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/runner-cli/runner/internal/strictjson"
)

// refParse is the first implementation of Parse, which converted a tree
// of JSON values of the whole file (refValue); the tests hold Parse to
// its results. It reads a tree from data, strictly: unknown fields, wrong types,
// missing required fields and every semantic rule of Validate are errors.
// All problems are reported at once as a *ValidationError, each naming
// file (used only in messages), node path and line and column. Empty
// lists ("acceptance": []) read as absent.
func refParse(file string, data []byte) (*Tree, error) {
	c := &collector{file: file, data: data}
	top, err := refValues(data)
	if err != nil {
		var se *strictjson.SyntaxError
		if errors.As(err, &se) {
			return nil, &ValidationError{File: file, Problems: []Problem{{File: file, Line: se.Line, Col: se.Col, Msg: se.Msg}}}
		}
		return nil, fmt.Errorf("parse %s: %w", file, err)
	}
	if top.Kind != refObject {
		c.addf(-1, top.Offset, `the file must hold a JSON object with "version" and "root", found %s`, top.Kind)
		return nil, c.err()
	}
	t := &Tree{}
	var root *refValue
	for _, m := range top.Members {
		v := m.Value
		switch m.Key {
		case "version":
			n, msg := refIntValue(v)
			if msg != "" {
				c.add(-1, v.Offset, `field "version" `+msg)
				continue
			}
			t.Version = n
			if n != Version {
				c.addf(-1, v.Offset, "unsupported version %d (this runner reads version %d)", n, Version)
			}
		case "root":
			if v.Kind != refObject {
				c.addf(-1, v.Offset, `field "root" must be an object, found %s`, v.Kind)
				continue
			}
			root = v
		default:
			msg := unknownField(m.Key, topKeys, topAliases)
			if _, isNodeKey := lookupKey(m.Key, nodeKeys[:]); isNodeKey {
				msg += `; node fields belong inside "root"`
			}
			c.add(-1, m.KeyOffset, msg)
		}
	}
	if top.Get("version") == nil {
		c.add(-1, top.Offset, `missing required field "version"`)
	}
	if root == nil {
		if top.Get("root") == nil {
			c.add(-1, top.Offset, `missing required field "root"`)
		}
		return nil, c.err()
	}
	fl := &flat{pos: true}
	c.fl = fl
	t.Root = c.refConvert(fl, root)
	fl.finish()
	c.checkRelations(fl)
	if !c.empty() {
		return nil, c.err()
	}
	return t, nil
}

// convert builds the nodes below the root object v, checking each field,
// in depth-first pre-order with an explicit stack.
func (c *collector) refConvert(fl *flat, v *refValue) *Node {
	type item struct {
		v         *refValue
		n         *Node
		parent, k int32
	}
	root := &Node{}
	stack := []item{{v, root, -1, -1}}
	var kids []item
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := it.n
		i := fl.add(n, it.parent, "")
		fl.objOffs = append(fl.objOffs, int32(it.v.Offset))
		idOff := it.v.Offset
		fl.depOffStart = append(fl.depOffStart, int32(len(fl.depOffs)))
		var present, bad fieldSet
		typeErr := func(f fieldSet, v *refValue, want string) {
			bad |= f
			c.addf(i, v.Offset, "field %q must be %s, found %s", f.key(), want, v.Kind)
		}
		kids = kids[:0]
		for _, m := range it.v.Members {
			v := m.Value
			f, known := lookupKey(m.Key, nodeKeys[:])
			if !known {
				c.add(i, m.KeyOffset, unknownField(m.Key, nodeKeys[:], nodeAliases))
				continue
			}
			present |= f
			switch f {
			case fID, fTitle, fGoal, fStatus, fBlockedReason:
				if v.Kind != refString {
					typeErr(f, v, "a string")
					continue
				}
				switch f {
				case fID:
					n.ID = v.Str
					idOff = v.Offset
				case fTitle:
					n.Title = v.Str
				case fGoal:
					n.Goal = v.Str
				case fStatus:
					n.Status = Status(v.Str)
				case fBlockedReason:
					n.BlockedReason = v.Str
				}
			case fAcceptance, fDependsOn:
				if v.Kind != refArray {
					typeErr(f, v, "a list of strings")
					continue
				}
				var list []string
				if len(v.Array) > 0 {
					list = make([]string, 0, len(v.Array))
				}
				for k, e := range v.Array {
					if e.Kind != refString {
						bad |= f
						c.addf(i, e.Offset, "field %q item %d must be a string, found %s", f.key(), k+1, e.Kind)
						continue
					}
					list = append(list, e.Str)
					if f == fDependsOn {
						fl.depOffs = append(fl.depOffs, int32(e.Offset))
					}
				}
				if f == fAcceptance {
					n.Acceptance = list
				} else {
					n.DependsOn = list
				}
			case fMaxAttempts, fAttempts:
				num, msg := refIntValue(v)
				if msg != "" {
					bad |= f
					c.addf(i, v.Offset, "field %q %s", f.key(), msg)
					continue
				}
				if f == fAttempts {
					n.Attempts = num
				} else {
					n.MaxAttempts = &num
				}
			case fChildren:
				if v.Kind != refArray {
					typeErr(f, v, "a list of nodes")
					continue
				}
				if len(v.Array) > 0 {
					n.Children = make([]*Node, 0, len(v.Array))
				}
				for k, e := range v.Array {
					if e.Kind != refObject {
						c.addf(i, e.Offset, `field "children" item %d must be an object, found %s`, k+1, e.Kind)
						continue
					}
					ch := &Node{}
					n.Children = append(n.Children, ch)
					kids = append(kids, item{e, ch, i, int32(k)})
				}
				if len(n.Children) == 0 {
					n.Children = nil
				}
			}
		}
		fl.idOffs = append(fl.idOffs, int32(idOff))
		fl.seg[i] = segment(n.ID, it.parent, it.k)
		checkFields(n, present, bad, func(f fieldSet, msg string) {
			off := it.v.Offset
			if m := it.v.Get(f.key()); m != nil {
				off = m.Offset
			}
			c.add(i, off, msg)
		})
		// The node is converted: drop its parsed values (its children
		// are held by the stack) so the memory can be reused.
		it.v.Members = nil
		for k := len(kids) - 1; k >= 0; k-- {
			stack = append(stack, kids[k])
		}
	}
	fl.depOffStart = append(fl.depOffStart, int32(len(fl.depOffs)))
	return root
}

// refIntValue reads a whole number; msg says what is wrong otherwise.
func refIntValue(v *refValue) (n int, msg string) {
	if v.Kind != refNumber {
		return 0, "must be a whole number, found " + v.Kind.String()
	}
	if strings.ContainsAny(v.Str, ".eE") {
		return 0, "must be a whole number, found " + v.Str
	}
	n, err := strconv.Atoi(v.Str)
	if err != nil {
		return 0, "is out of range: " + quote(v.Str)
	}
	return n, ""
}

// refValue is a JSON value with the offset of its first byte.
type refValue struct {
	Kind    refKind
	Offset  int
	Str     string // String: the decoded string; Number: the literal
	Array   []*refValue
	Members []refMember
}

type refMember struct {
	Key       string
	KeyOffset int
	Value     *refValue
}

// refKind is a JSON kind, named as in the messages.
type refKind jsontext.Kind

const (
	refString refKind = '"'
	refNumber refKind = '0'
	refArray  refKind = '['
	refObject refKind = '{'
)

func (k refKind) String() string { return strictjson.KindName(jsontext.Kind(k)) }

// Get returns the member named key of an object, or nil.
func (v *refValue) Get(key string) *refValue {
	for i := range v.Members {
		if v.Members[i].Key == key {
			return v.Members[i].Value
		}
	}
	return nil
}

// refValues reads data, one JSON value nested at most MaxJSONDepth deep,
// into refValues, value by value with the decoder.
func refValues(data []byte) (*refValue, error) {
	if err := strictjson.CheckUTF8(data); err != nil {
		return nil, err
	}
	d := strictjson.NewDecoder(data)
	offset := func() int {
		pos := int(d.InputOffset())
		for pos < len(data) && strings.IndexByte(" \t\r\n,:", data[pos]) >= 0 {
			pos++
		}
		return pos
	}
	var value func() (*refValue, error)
	value = func() (*refValue, error) {
		kind := d.PeekKind()
		v := &refValue{Kind: refKind(kind), Offset: offset()}
		if (kind == '{' || kind == '[') && d.StackDepth() >= MaxJSONDepth {
			return nil, strictjson.DepthError(data, v.Offset, MaxJSONDepth)
		}
		tok, err := d.ReadToken()
		if err != nil {
			return nil, err
		}
		switch kind {
		case '"', '0':
			v.Str = tok.String()
		case '{':
			for d.PeekKind() != '}' {
				keyOff := offset()
				key, err := d.ReadToken()
				if err != nil {
					return nil, err
				}
				m := refMember{Key: key.String(), KeyOffset: keyOff}
				if m.Value, err = value(); err != nil {
					return nil, err
				}
				v.Members = append(v.Members, m)
			}
			_, err = d.ReadToken()
		case '[':
			for d.PeekKind() != ']' {
				e, err := value()
				if err != nil {
					return nil, err
				}
				v.Array = append(v.Array, e)
			}
			_, err = d.ReadToken()
		}
		return v, err
	}
	v, err := value()
	if err == nil {
		err = strictjson.End(data, d)
	}
	if err != nil {
		return nil, strictjson.ErrorOf(data, d, err)
	}
	return v, nil
}

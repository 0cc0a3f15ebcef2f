package tree

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/runner-cli/runner/internal/strictjson"
)

// refParse is the first implementation of Parse, which converted the
// strictjson.Value tree of the whole file; the tests hold Parse to its
// results. It reads a tree from data, strictly: unknown fields, wrong types,
// missing required fields and every semantic rule of Validate are errors.
// All problems are reported at once as a *ValidationError, each naming
// file (used only in messages), node path and line and column. Empty
// lists ("acceptance": []) read as absent.
func refParse(file string, data []byte) (*Tree, error) {
	c := &collector{file: file, data: data}
	top, err := strictjson.Parse(data, MaxJSONDepth)
	if err != nil {
		var se *strictjson.SyntaxError
		if errors.As(err, &se) {
			return nil, &ValidationError{File: file, Problems: []Problem{{File: file, Line: se.Line, Col: se.Col, Msg: se.Msg}}}
		}
		return nil, fmt.Errorf("parse %s: %w", file, err)
	}
	if top.Kind != strictjson.Object {
		c.addf(-1, top.Offset, `the file must hold a JSON object with "version" and "root", found %s`, top.Kind)
		return nil, c.err()
	}
	t := &Tree{}
	var root *strictjson.Value
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
			if v.Kind != strictjson.Object {
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
func (c *collector) refConvert(fl *flat, v *strictjson.Value) *Node {
	type item struct {
		v         *strictjson.Value
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
		typeErr := func(f fieldSet, v *strictjson.Value, want string) {
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
				if v.Kind != strictjson.String {
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
				if v.Kind != strictjson.Array {
					typeErr(f, v, "a list of strings")
					continue
				}
				var list []string
				if len(v.Array) > 0 {
					list = make([]string, 0, len(v.Array))
				}
				for k, e := range v.Array {
					if e.Kind != strictjson.String {
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
				if v.Kind != strictjson.Array {
					typeErr(f, v, "a list of nodes")
					continue
				}
				if len(v.Array) > 0 {
					n.Children = make([]*Node, 0, len(v.Array))
				}
				for k, e := range v.Array {
					if e.Kind != strictjson.Object {
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
func refIntValue(v *strictjson.Value) (n int, msg string) {
	if v.Kind != strictjson.Number {
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

package tree

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/strictjson"
	"github.com/runner-cli/runner/internal/testreport"
)

// Load reads and parses a tree file. The file must be at most MaxFileSize
// bytes of UTF-8. Read errors name the file; an invalid tree is reported
// as a *ValidationError listing every problem.
func Load(path string) (*Tree, error) {
	data, err := fsutil.ReadLimited(path, MaxFileSize, true)
	if err != nil {
		return nil, err
	}
	return Parse(fsutil.DisplayPath(path), data)
}

// Parse reads a tree from data, strictly: unknown fields, wrong types,
// missing required fields and every semantic rule of Validate are errors.
// All problems are reported at once as a *ValidationError, each naming
// file (used only in messages), node path and line and column. Empty
// lists ("acceptance": []) read as absent.
//
// The file is converted into nodes as the JSON decoder reads it, token by
// token, in one pass, without an intermediate tree of JSON values; the
// node being read gives each problem its path. A syntax error anywhere
// (or nesting deeper than MaxJSONDepth) is the only problem reported.
func Parse(file string, data []byte) (*Tree, error) {
	c := &collector{file: file, data: data, byNode: true}
	p := &treeParser{c: c, data: data, fl: &flat{pos: true}}
	t, err := p.document()
	if err != nil {
		var se *strictjson.SyntaxError
		if errors.As(err, &se) {
			return nil, &ValidationError{File: file, Problems: []Problem{{File: file, Line: se.Line, Col: se.Col, Msg: se.Msg}}}
		}
		return nil, fmt.Errorf("parse %s: %w", file, err)
	}
	if t == nil || !c.empty() {
		return nil, c.err()
	}
	return t, nil
}

// treeParser converts a tree file into nodes while the decoder reads it.
type treeParser struct {
	c    *collector
	data []byte
	d    *jsontext.Decoder
	fl   *flat
	// Scratch lists by nesting level, copied out at their exact length.
	strs [][]string
	kids [][]*Node
}

// document reads the whole file. It returns a syntax error, or the tree
// with problems left in the collector (nil when there is no root to
// check further).
func (p *treeParser) document() (*Tree, error) {
	if err := strictjson.CheckUTF8(p.data); err != nil {
		return nil, err
	}
	p.d = strictjson.NewDecoder(p.data, treeDecoderOptions)
	t, err := p.top()
	if err == nil {
		err = strictjson.End(p.data, p.d)
	}
	if err != nil {
		return nil, strictjson.ErrorOf(p.data, p.d, err)
	}
	return t, nil
}

func (p *treeParser) top() (*Tree, error) {
	c := p.c
	kind, err := p.peek()
	if err != nil {
		return nil, err
	}
	if kind != jsontext.KindBeginObject {
		off, err := p.skip()
		if err != nil {
			return nil, err
		}
		c.addf(-1, off, `the file must hold a JSON object with "version" and "root", found %s`, strictjson.KindName(kind))
		return nil, nil
	}
	t := &Tree{}
	var sawVersion, sawRoot, rootOK bool
	var others keySet
	topOff, err := p.object(func(key []byte, keyOff int) error {
		switch string(key) {
		case "version":
			if sawVersion {
				return strictjson.DuplicateError(p.data, keyOff, "version")
			}
			sawVersion = true
			n, msg, off, err := p.int()
			if err != nil {
				return err
			}
			if msg != "" {
				c.add(-1, off, `field "version" `+msg)
				return nil
			}
			t.Version = n
			if n != Version {
				c.addf(-1, off, "unsupported version %d (this runner reads version %d)", n, Version)
			}
		case "root":
			if sawRoot {
				return strictjson.DuplicateError(p.data, keyOff, "root")
			}
			sawRoot = true
			kind, err := p.peek()
			if err != nil {
				return err
			}
			if kind != jsontext.KindBeginObject {
				off, err := p.skip()
				c.addf(-1, off, `field "root" must be an object, found %s`, strictjson.KindName(kind))
				return err
			}
			rootOK = true
			t.Root = &Node{}
			return p.node(t.Root, -1, -1, 0)
		default:
			k := string(key)
			if err := p.add(&others, k, keyOff); err != nil {
				return err
			}
			msg := unknownField(k, topKeys, topAliases)
			if _, isNodeKey := lookupKey(k, nodeKeys[:]); isNodeKey {
				msg += `; node fields belong inside "root"`
			}
			c.add(-1, keyOff, msg)
			_, err := p.skip()
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !sawVersion {
		c.add(-1, topOff, `missing required field "version"`)
	}
	if !rootOK {
		if !sawRoot {
			c.add(-1, topOff, `missing required field "root"`)
		}
		return nil, nil
	}
	p.fl.finish()
	c.fl = p.fl
	c.checkRelations(p.fl)
	return t, nil
}

// node reads the object that comes next into n, checking each field,
// and the nodes below it. parent is the index of the node holding it (-1
// for the root), k its place among the parent's children, level its
// nesting in scratch lists.
func (p *treeParser) node(n *Node, parent, k int32, level int) error {
	c, fl := p.c, p.fl
	off, err := p.open()
	if err != nil {
		return err
	}
	i := fl.add(n, parent, "")
	fl.objOffs = append(fl.objOffs, int32(off))
	fl.idOffs = append(fl.idOffs, int32(off))
	fl.depOffStart = append(fl.depOffStart, int32(len(fl.depOffs)))
	var present, bad fieldSet
	var others keySet             // the names that are not node fields
	var valOff [numNodeKeys]int32 // by field bit: where the field's value starts
	typeErr := func(f fieldSet, kind jsontext.Kind, want string) error {
		bad |= f
		voff, err := p.skip()
		valOff[f.bit()] = int32(voff)
		c.addf(i, voff, "field %q must be %s, found %s", f.key(), want, strictjson.KindName(kind))
		return err
	}
	err = p.members(func(key []byte, keyOff int) error {
		f, known := lookupKeyBytes(key)
		if !known {
			if err := p.add(&others, string(key), keyOff); err != nil {
				return err
			}
			c.add(i, keyOff, unknownField(string(key), nodeKeys[:], nodeAliases))
			_, err := p.skip()
			return err
		}
		if present&f != 0 {
			return strictjson.DuplicateError(p.data, keyOff, f.key())
		}
		present |= f
		kind, err := p.peek()
		if err != nil {
			return err
		}
		switch f {
		case fID, fTitle, fGoal, fStatus, fBlockedReason:
			if kind != '"' {
				return typeErr(f, kind, "a string")
			}
			str, voff, err := p.str()
			if err != nil {
				return err
			}
			valOff[f.bit()] = int32(voff)
			switch f {
			case fID:
				n.ID = str
				fl.idOffs[i] = int32(voff)
			case fTitle:
				n.Title = str
			case fGoal:
				n.Goal = str
			case fStatus:
				n.Status = internStatus(str)
			case fBlockedReason:
				n.BlockedReason = str
			}
		case fAcceptance, fDependsOn, fRemoves, fExecutors:
			if kind != jsontext.KindBeginArray {
				return typeErr(f, kind, "a list of strings")
			}
			list, err := p.strings(i, f, level, &bad)
			if err != nil {
				return err
			}
			switch f {
			case fAcceptance:
				n.Acceptance = list
			case fDependsOn:
				n.DependsOn = list
			case fExecutors:
				n.Executors = list
			default:
				n.Removes = list
			}
		case fMaxCostUSD, fMaxTokens:
			return p.spendCap(n, i, f, &bad, &valOff)
		case fMaxAttempts, fAttempts:
			num, msg, voff, err := p.int()
			if err != nil {
				return err
			}
			valOff[f.bit()] = int32(voff)
			if msg != "" {
				bad |= f
				c.addf(i, voff, "field %q %s", f.key(), msg)
				return nil
			}
			if f == fAttempts {
				n.Attempts = num
			} else {
				n.MaxAttempts = &num
			}
		case fChecks:
			if kind != jsontext.KindBeginArray {
				return typeErr(f, kind, "a list of checks (objects with a guard's keys)")
			}
			list, err := p.checks(i)
			n.Checks = list
			return err
		case fChildren:
			if kind != jsontext.KindBeginArray {
				return typeErr(f, kind, "a list of nodes")
			}
			return p.children(n, i, level)
		}
		return nil
	})
	if err != nil {
		return err
	}
	fl.seg[i] = segment(n.ID, parent, k)
	checkFields(n, present, bad, func(f fieldSet, msg string) {
		at := off
		if present&f != 0 {
			at = int(valOff[f.bit()])
		}
		c.add(i, at, msg)
	})
	return nil
}

// strings reads the list of strings of field f of node i.
func (p *treeParser) strings(i int32, f fieldSet, level int, bad *fieldSet) ([]string, error) {
	c, fl := p.c, p.fl
	for len(p.strs) <= level {
		p.strs = append(p.strs, nil)
	}
	list := p.strs[level][:0]
	if f == fDependsOn {
		fl.depOffStart[i] = int32(len(fl.depOffs))
	}
	err := p.array(func(k int) error {
		ek, err := p.peek()
		if err != nil {
			return err
		}
		if ek != '"' {
			*bad |= f
			eoff, err := p.skip()
			c.addf(i, eoff, "field %q item %d must be a string, found %s", f.key(), k+1, strictjson.KindName(ek))
			return err
		}
		str, eoff, err := p.str()
		if err != nil {
			return err
		}
		list = append(list, str)
		if f == fDependsOn {
			fl.depOffs = append(fl.depOffs, int32(eoff))
		}
		return nil
	})
	var out []string
	if len(list) > 0 {
		out = slices.Clone(list)
	}
	clear(list)
	p.strs[level] = list[:0]
	return out, err
}

// children reads the children of node n (index i).
func (p *treeParser) children(n *Node, i int32, level int) error {
	for len(p.kids) <= level {
		p.kids = append(p.kids, nil)
	}
	kids := p.kids[level][:0]
	err := p.objects(i, "children", "an object", func(k int) error {
		ch := &Node{}
		kids = append(kids, ch)
		return p.node(ch, i, int32(k), level+1)
	})
	if len(kids) > 0 {
		n.Children = slices.Clone(kids)
	}
	clear(kids)
	p.kids[level] = kids[:0]
	return err
}

// objects reads the array of node i's field, whose items must be
// objects: each is read by item (k its index); an item of another kind
// is skipped, and said to be none of what (an object...).
func (p *treeParser) objects(i int32, field, what string, item func(k int) error) error {
	return p.array(func(k int) error {
		ek, err := p.peek()
		if err != nil {
			return err
		}
		if ek != jsontext.KindBeginObject {
			eoff, err := p.skip()
			p.c.addf(i, eoff, `field %q item %d must be %s, found %s`, field, k+1, what, strictjson.KindName(ek))
			return err
		}
		return item(k)
	})
}

// int reads a whole number; msg says what is wrong otherwise (the value
// is read either way), off is where the value starts.
func (p *treeParser) int() (n int, msg string, off int, err error) {
	kind, err := p.peek()
	if err != nil {
		return 0, "", 0, err
	}
	if kind != '0' {
		off, err := p.skip()
		return 0, "must be a whole number, found " + strictjson.KindName(kind), off, err
	}
	raw, off, err := p.scalar()
	if err != nil {
		return 0, "", off, err
	}
	lit := string(raw)
	if strings.ContainsAny(lit, ".eE") {
		return 0, "must be a whole number, found " + lit, off, nil
	}
	n, err = strconv.Atoi(lit)
	if err != nil {
		return 0, "is out of range: " + quote(lit), off, nil
	}
	return n, "", off, nil
}

// internStatus returns the valid statuses without allocating a string
// per node.
func internStatus(s string) Status {
	switch Status(s) {
	case StatusOpen:
		return StatusOpen
	case StatusDone:
		return StatusDone
	case StatusBlocked:
		return StatusBlocked
	}
	return Status(s)
}

// checkKeys are the keys of a check, a guard's (config.Guard).
var checkKeys = []string{"name", "run", "timeout", "output_limit", "report"}

// checkAliases are keys people plausibly write for a check's.
var checkAliases = map[string]string{"command": "run", "cmd": "run", "exec": "run", "script": "run", "title": "name", "id": "name", "limit": "output_limit", "format": "report"}

// checks reads the checks of node i: a list of objects with a guard's
// keys, each checked on its own (checkRules).
func (p *treeParser) checks(i int32) ([]Check, error) {
	c := p.c
	var out []Check
	err := p.objects(i, "checks", `an object with "name" and "run"`, func(k int) error {
		var ch Check
		var seen keySet
		var offs [5]int
		off, err := p.object(func(key []byte, keyOff int) error {
			name := string(key)
			if err := p.add(&seen, name, keyOff); err != nil {
				return err
			}
			f, known := lookupKey(name, checkKeys)
			if !known {
				c.addf(i, keyOff, `field "checks" item %d: %s`, k+1, unknownField(name, checkKeys, checkAliases))
				_, err := p.skip()
				return err
			}
			kind, err := p.peek()
			if err != nil {
				return err
			}
			if kind != '"' {
				voff, err := p.skip()
				c.addf(i, voff, `field "checks" item %d: %q must be a string, found %s`, k+1, name, strictjson.KindName(kind))
				return err
			}
			str, voff, err := p.str()
			if err != nil {
				return err
			}
			offs[f.bit()] = voff
			*[...]*string{&ch.Name, &ch.Run, &ch.Timeout, &ch.OutputLimit, &ch.Report}[f.bit()] = str
			return nil
		})
		if err != nil {
			return err
		}
		for b, v := range offs {
			if v == 0 {
				offs[b] = off
			}
		}
		checkRules(ch, out, func(key int, msg string) {
			c.addf(i, offs[key], `field "checks" item %d: %s`, k+1, msg)
		})
		out = append(out, ch)
		return nil
	})
	return out, err
}

// checkRules applies the rules of one check, given the node's checks
// before it; emit gets the index of the key in checkKeys a problem is at.
func checkRules(ch Check, before []Check, emit func(key int, msg string)) {
	if strings.TrimSpace(ch.Name) == "" {
		emit(0, `needs a "name"`)
	} else {
		for j, b := range before {
			if b.Name == ch.Name {
				emit(0, fmt.Sprintf("name %q is already used by item %d", ch.Name, j+1))
				break
			}
		}
	}
	if strings.TrimSpace(ch.Run) == "" {
		emit(1, `needs a command to "run", for example "go test ./internal/slug/"`)
	}
	if ch.Timeout != "" {
		if d, err := time.ParseDuration(ch.Timeout); err != nil || d <= 0 {
			emit(2, fmt.Sprintf(`"timeout" %q must be a duration greater than zero, for example "10m"`, ch.Timeout))
		}
	}
	if ch.OutputLimit != "" {
		if s, err := config.ParseSize(ch.OutputLimit); err != nil || s <= 0 {
			emit(3, fmt.Sprintf(`"output_limit" %q must be a size greater than zero, for example "1MiB"`, ch.OutputLimit))
		}
	}
	if _, err := testreport.ParseFormat(ch.Report); err != nil {
		emit(4, err.Error())
	}
}

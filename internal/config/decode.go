package config

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/runner-cli/runner/internal/fsutil"
)

// The library parses the file and converts every value into its Go field.
// The decoder only chooses the field, by its toml tag, and hands the
// library one key at a time (as a toml.Primitive) rather than the whole
// Config, because toml.Decode into the struct would
//   - stop at the first bad value, where every problem is reported here;
//   - match keys ignoring case, taking "Preset" for "preset";
//   - leave unknown keys to MetaData.Undecoded, which names them without
//     their element: "guard.timout" for the second [[guard]]'s;
//   - give every [[guard]] zero for the keys it leaves out, where a
//     default is wanted but "0s" is an error.
// Which fields the file set is recorded for the defaults (fillDefaults).

// decoder fills a Config from the parsed file, reporting every problem.
type decoder struct {
	*report
	md  toml.MetaData
	set map[any]bool // pointers to the fields the file set
}

// decode parses the file's text into a Config on top of the defaults. It
// returns false when the text is not TOML at all.
func decode(r *report) (*Config, bool) {
	var root toml.Primitive
	md, err := toml.Decode(string(r.data), &root)
	if err != nil {
		r.syntaxError(err)
		return nil, false
	}
	d := &decoder{report: r, md: md, set: map[any]bool{}}
	cfg := Default()
	d.value("", root, reflect.ValueOf(cfg).Elem())
	fillDefaults(cfg, func(field any) bool { return d.set[field] })
	return cfg, true
}

// syntaxError reports text the library could not parse.
func (r *report) syntaxError(err error) {
	p := Problem{File: r.file, Msg: err.Error()}
	var pe toml.ParseError
	if errors.As(err, &pe) {
		p.Msg = "invalid TOML: " + pe.Message
		// The byte offset is more exact than the reported line, which is
		// already the next one when the problem is a newline.
		if pe.Position.Line > 0 {
			p.Line, p.Column = fsutil.LineCol(r.data, pe.Position.Start)
		}
	}
	r.problems = append(r.problems, p)
}

// value decodes v, the value of key path, into dst and reports whether it
// could. A table is decoded key by key, an array element by element. An
// array is set only when every element decodes (dropping one would shift
// the index of the next in later messages); a table of values
// (executor.env) keeps the entries that decode, so they are checked too.
func (d *decoder) value(path string, v toml.Primitive, dst reflect.Value) bool {
	t := dst.Type()
	switch {
	case isTable(t):
		entries, ok := d.entries(path, v, t)
		fields := fieldsOf(t)
		for _, k := range sortedKeys(entries) {
			if i, known := fields.index[k]; known {
				d.value(keyPath(path, k), entries[k], dst.FieldByIndex(i))
			} else {
				d.unknown(path, k, fields.keys)
			}
		}
		if ok {
			d.set[dst.Addr().Interface()] = true // the file has the table
		}
		return ok
	case t.Kind() == reflect.Slice:
		var elems []toml.Primitive
		if err := d.md.PrimitiveDecode(v, &elems); err != nil {
			d.wrongType(path, v, t)
			return false
		}
		out := reflect.Zero(t) // an empty array is no slice, as when unset
		if len(elems) > 0 {
			out = reflect.MakeSlice(t, len(elems), len(elems))
		}
		ok := true
		for i, e := range elems {
			ok = d.value(indexPath(path, i), e, out.Index(i)) && ok
		}
		return ok && d.store(dst, out)
	case t.Kind() == reflect.Map:
		entries, ok := d.entries(path, v, t)
		out := reflect.Zero(t)
		if len(entries) > 0 {
			out = reflect.MakeMapWithSize(t, len(entries))
		}
		for _, k := range sortedKeys(entries) {
			e := reflect.New(t.Elem()).Elem()
			if d.value(keyPath(path, k), entries[k], e) {
				out.SetMapIndex(reflect.ValueOf(k), e)
			}
		}
		return ok && d.store(dst, out)
	}
	// The library writes a single value only once it has converted it,
	// and so do Duration and Size: on a problem dst keeps its default.
	if err := d.md.PrimitiveDecode(v, dst.Addr().Interface()); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			// What Duration or Size (or the library's range check) found
			// wrong with the value, wrapped with the library's position,
			// which is not used: it is the same for every [[guard]].
			d.addf(path, "%s", pe.Message)
		} else {
			d.wrongType(path, v, t)
		}
		return false
	}
	d.set[dst.Addr().Interface()] = true
	return true
}

// entries splits a table into its keys' values; ok is false when v is not
// a table.
func (d *decoder) entries(path string, v toml.Primitive, t reflect.Type) (entries map[string]toml.Primitive, ok bool) {
	// The library decodes a value that is not a table into a map as if
	// it were an empty table, so the type is checked first.
	table, ok := d.raw(v).(map[string]any)
	if !ok {
		d.wrongType(path, v, t)
		return nil, false
	}
	entries = make(map[string]toml.Primitive, len(table))
	_ = d.md.PrimitiveDecode(v, &entries) // a table always splits
	return entries, true
}

// store sets dst to v and records that the file set it.
func (d *decoder) store(dst, v reflect.Value) bool {
	dst.Set(v)
	d.set[dst.Addr().Interface()] = true
	return true
}

// raw returns v as the library parsed it, for messages.
func (d *decoder) raw(v toml.Primitive) any {
	var x any
	_ = d.md.PrimitiveDecode(v, &x) // an empty interface takes anything
	return x
}

func (d *decoder) wrongType(path string, v toml.Primitive, t reflect.Type) {
	d.addf(path, "want %s, got %s", want(path, t), describe(d.raw(v)))
}

// want names what the key at path holds, given its field's type.
func want(path string, t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Float64:
		return "a number such as 25 or 12.5"
	case reflect.Bool:
		return "true or false"
	case reflect.Map:
		if t.Elem().Kind() == reflect.String {
			return `a table of strings such as { NAME = "value" }`
		}
		return "a table"
	case reflect.Slice:
		switch {
		case isTable(t.Elem()):
			return "[[" + path + "]] sections"
		case t.Elem().Kind() == reflect.String:
			return `an array of strings such as ["a", "b"]`
		}
		return "an array"
	case reflect.Struct:
		if strings.HasSuffix(path, "]") { // an element of [[...]]
			return "a table"
		}
		return "a table ([" + path + "])"
	}
	return "a value of Go type " + t.String()
}

// describe names a TOML value's type (and the value, when short) for
// error messages.
func describe(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) > 40 {
			return "a string"
		}
		return fmt.Sprintf("the string %q", x)
	case int64:
		return fmt.Sprintf("the integer %d", x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Sprintf("the float %v", x)
		}
		return fmt.Sprintf("the float %g", x)
	case bool:
		return fmt.Sprintf("the boolean %t", x)
	case time.Time:
		return "a date-time"
	case map[string]any:
		return "a table"
	case []map[string]any:
		return "an array of tables"
	case []any:
		return "an array"
	case nil:
		return "nothing"
	}
	return fmt.Sprintf("a value of type %T", v)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

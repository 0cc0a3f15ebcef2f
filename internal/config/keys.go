package config

import (
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
)

// The keys a table accepts are the toml tags of its struct's fields.

// fields lists the keys of a table type and the field each is read into.
// The keys of an embedded struct whose tag is `toml:",inline"` are the
// table's own (as [review] takes every key of [executor]).
type fields struct {
	keys  []string         // in field order
	index map[string][]int // key -> field index path (reflect.Value.FieldByIndex)
}

var fieldsCache sync.Map // reflect.Type -> *fields

// fieldsOf returns the keys of the struct type t, from its toml tags.
func fieldsOf(t reflect.Type) *fields {
	if f, ok := fieldsCache.Load(t); ok {
		return f.(*fields)
	}
	f := &fields{index: map[string][]int{}}
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous && isTable(sf.Type) && strings.HasSuffix(sf.Tag.Get("toml"), ",inline") {
			inner := fieldsOf(sf.Type)
			for _, k := range inner.keys {
				f.keys = append(f.keys, k)
				f.index[k] = append([]int{i}, inner.index[k]...)
			}
			continue
		}
		if k := tomlKey(sf); k != "" && k != "-" {
			f.keys = append(f.keys, k)
			f.index[k] = []int{i}
		}
	}
	cached, _ := fieldsCache.LoadOrStore(t, f)
	return cached.(*fields)
}

// tomlKey is the key a struct field is read from: the name in its tag.
func tomlKey(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	return name
}

var unmarshalerType = reflect.TypeFor[toml.Unmarshaler]()

// isTable reports whether a field of type t is written as a TOML table:
// a struct that does not decode itself as Duration does.
func isTable(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && !reflect.PointerTo(t).Implements(unmarshalerType)
}

// unknown reports a key the table at parent does not accept.
func (d *decoder) unknown(parent, key string, known []string) {
	path := keyPath(parent, key)
	msg := fmt.Sprintf("unknown key %q", path)
	if s := closestKey(key, known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", keyPath(parent, s))
	} else if t := otherTable(key, parent); t != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", t)
	} else {
		msg += fmt.Sprintf("; known keys here: %s", strings.Join(known, ", "))
	}
	d.problems = append(d.problems, Problem{File: d.file, Line: d.line(path), Msg: msg})
}

// otherTable returns the full path of key in another top-level table that
// accepts it, for a key written in the wrong place.
func otherTable(key, parent string) string {
	base := parent
	if i := strings.IndexAny(base, ".["); i >= 0 {
		base = base[:i]
	}
	root := reflect.TypeFor[Config]()
	for i := range root.NumField() {
		f := root.Field(i)
		table := tomlKey(f)
		if table == base || !isTable(f.Type) {
			continue // [[guard]] is no place for a stray key
		}
		if _, ok := fieldsOf(f.Type).index[key]; ok {
			return table + "." + key
		}
	}
	return ""
}

package config

import "reflect"

// tableKeys maps each top-level table to the keys it accepts, with "" for
// the top level itself.
var tableKeys = func() map[string][]string {
	root := reflect.TypeFor[Config]()
	m := map[string][]string{"": fieldsOf(root).keys}
	for i := range root.NumField() {
		t := root.Field(i).Type
		if t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		m[tomlKey(root.Field(i))] = fieldsOf(t).keys
	}
	return m
}()

// scrubRuleKey lists the keys of a [[scrub.rules]] element.
var scrubRuleKey = fieldsOf(reflect.TypeFor[ScrubRule]()).keys

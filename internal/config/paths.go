package config

import (
	"strconv"
	"strings"
)

// Problems name keys by path: dotted, with keys that are not bare quoted,
// and arrays indexed: executor.timeout, executor."A-B", guard[1].run.

// keyPath joins a table path and a key the way problems name keys:
// dotted, with keys that are not bare quoted.
func keyPath(parent, key string) string {
	k := key
	if !isBareKey(key) {
		k = strconv.Quote(key)
	}
	if parent == "" {
		return k
	}
	return parent + "." + k
}

// indexPath names element i of the array at parent.
func indexPath(parent string, i int) string {
	return parent + "[" + strconv.Itoa(i) + "]"
}

// parentPath strips the last key or index from path; it returns "" for a
// top-level key.
func parentPath(path string) string {
	if strings.HasSuffix(path, "]") {
		if i := strings.LastIndexByte(path, '['); i > 0 {
			return path[:i]
		}
	}
	// Skip quoted parts when looking for the last separating dot.
	inQuote := false
	last := -1
	for i := 0; i < len(path); i++ {
		switch c := path[i]; {
		case c == '\\' && inQuote:
			i++
		case c == '"':
			inQuote = !inQuote
		case c == '.' && !inQuote:
			last = i
		}
	}
	if last < 0 {
		return ""
	}
	return path[:last]
}

func isBareKey(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isBareKeyByte(s[i]) {
			return false
		}
	}
	return true
}

func isBareKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

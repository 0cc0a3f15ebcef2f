package strictjson

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"duplicate key", "{\n  \"a\": 1,\n  \"a\": 2\n}", "line 3, column 3: duplicate key \"a\""},
		{"trailing comma", `{"a": 1,}`, `expected a quoted object key`},
		{"trailing data", `{} {}`, `after the JSON value`},
		{"empty", "  ", "empty input"},
		{"bad escape", `"\q"`, "invalid escape"},
		{"control char", "\"a\nb\"", "control character"},
		{"leading zero", `01`, "after the JSON value"},
		{"unterminated", `{"a": "b`, "unterminated string"},
		{"bad literal", `tru`, "invalid literal"},
		{"invalid utf8", "\"\xff\"", "invalid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in), 0)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse(%q) error = %v, want it to contain %q", tt.in, err, tt.want)
			}
		})
	}
}

func TestParseDepth(t *testing.T) {
	deep := strings.Repeat("[", 20) + strings.Repeat("]", 20)
	if _, err := Parse([]byte(deep), 10); err == nil || !strings.Contains(err.Error(), "nesting deeper than 10") {
		t.Fatalf("want depth error, got %v", err)
	}
	if _, err := Parse([]byte(deep), 20); err != nil {
		t.Fatalf("depth 20 should parse: %v", err)
	}
}

func TestParseValues(t *testing.T) {
	v, err := Parse([]byte(`{"s":"a\u00e9\n","n":-1.5e3,"b":true,"z":null,"a":[1,{}]}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Get("s").Str; got != "aé\n" {
		t.Errorf("s = %q", got)
	}
	if got := v.Get("n"); got.Kind != Number || got.Str != "-1.5e3" {
		t.Errorf("n = %+v", got)
	}
	if !v.Get("b").Bool || v.Get("z").Kind != Null || len(v.Get("a").Array) != 2 {
		t.Errorf("unexpected value %+v", v)
	}
	if v.Get("missing") != nil {
		t.Error("Get of a missing key should be nil")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`{}`, `[1,2]`, `{"a":{"b":[true,false,null]}}`, `"\u12"`, `-0.1e+5`, `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := Parse(data, 64)
		if err == nil && !json.Valid(data) {
			t.Fatalf("Parse accepted invalid JSON %q", data)
		}
	})
}

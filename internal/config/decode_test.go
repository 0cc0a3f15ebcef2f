package config

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestDecodeProblems checks what decoding one key at a time gives: every
// bad value is reported, on its own line, with the index of its element.
func TestDecodeProblems(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // every problem, in order
	}{
		{"every bad element and entry",
			"[executor]\nargs = [1, \"ok\", 2]\nenv = { A = 1, \"b-c\" = \"x\" }\n",
			[]string{
				`line 2: executor.args[0]: want a string, got the integer 1`,
				`line 2: executor.args[2]: want a string, got the integer 2`,
				`line 3: executor.env.A: want a string, got the integer 1`,
				`line 3: executor.env.b-c: "b-c" is not a valid environment variable name`,
			}},
		{"the first of two guards",
			"[[guard]]\nname = \"a\"\ntimeout = 30\nrun = \"x\"\n[[guard]]\nname = \"b\"\nrun = \"y\"\ntimeout = \"1m\"\n",
			[]string{`line 3: guard[0].timeout: want a duration string`}},
		{"unknown key in an inline array of tables",
			"guard = [{ name = \"a\", run = \"b\" },\n  { name = \"c\", run = \"d\", bogus = 1 }]\n",
			[]string{`line 2: unknown key "guard[1].bogus"; known keys here: name, run, timeout, output_limit`}},
		{"a key that differs only in case",
			"[executor]\npreset = \"claude\"\nPreset = \"codex\"\n",
			[]string{`line 3: unknown key "executor.Preset" (did you mean "executor.preset"?)`}},
		{"unknown table in a table",
			"[executor.bogus]\nx = 1\n",
			[]string{`line 1: unknown key "executor.bogus"; known keys here: name, preset, bin`}},
		{"a bad value keeps the default",
			"[executor]\npreset = \"command\"\ncommand = [\"a\"]\nargs = \"-x\"\n",
			[]string{`line 4: executor.args: want an array of strings such as ["a", "b"], got the string "-x"`}},
		{"an array of tables given values",
			"[scrub]\nrules = [\"x\"]\n",
			[]string{`line 2: scrub.rules[0]: want a table, got the string "x"`}},
		{"a table given a value",
			"[executor]\nprices = 3\n",
			[]string{`line 2: executor.prices: want a table ([executor.prices]), got the integer 3`}},
		{"a date-time",
			"[loop]\nmax_wait = 1979-05-27T07:32:00Z\n",
			[]string{`line 2: loop.max_wait: want a duration string in Go syntax such as "90s", "30m" or "1h30m", got a date-time`}},
		{"an integer a float cannot hold",
			"[loop]\nmax_cost_usd = 9007199254740993\n",
			[]string{`line 2: loop.max_cost_usd: 9007199254740993 is out of the safe float64 range`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			probs := parseProblems(t, tc.src)
			if len(probs) != len(tc.want) {
				t.Fatalf("got %d problems, want %d:\n%v", len(probs), len(tc.want), &Error{probs})
			}
			for i, w := range tc.want {
				if got := probs[i].Error(); !strings.HasPrefix(got, file+": "+w) {
					t.Errorf("problem %d:\n got %s\nwant %s: %s...", i, got, file, w)
				}
			}
		})
	}
}

// TestGuardDefaultsPerElement checks that each [[guard]] gets the
// defaults of the keys it leaves out, and keeps those it sets.
func TestGuardDefaultsPerElement(t *testing.T) {
	cfg := mustParse(t, "[[guard]]\nname = \"a\"\nrun = \"x\"\ntimeout = \"1m\"\n[[guard]]\nname = \"b\"\nrun = \"y\"\noutput_limit = \"2KiB\"\n")
	want := []Guard{
		{Name: "a", Run: "x", Timeout: Duration{60e9}, OutputLimit: DefaultGuardOutputLimit},
		{Name: "b", Run: "y", Timeout: Duration{DefaultGuardTimeout}, OutputLimit: 2 * KiB},
	}
	if !reflect.DeepEqual(cfg.Guards, want) {
		t.Fatalf("guards = %+v, want %+v", cfg.Guards, want)
	}
}

// TestEveryFieldHasAKey checks that every field of Config, down to the
// elements of its arrays of tables, is read from a key: its toml tag (an
// inline struct's fields are its table's keys). The fields a file does
// not set itself are listed.
func TestEveryFieldHasAKey(t *testing.T) {
	derived := map[string]bool{"review.Enabled": true}
	var walk func(path string, typ reflect.Type)
	walk = func(path string, typ reflect.Type) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			key := tomlKey(f)
			if f.Anonymous && f.Tag.Get("toml") == ",inline" {
				walk(path, f.Type)
				continue
			}
			if key == "-" && derived[path+"."+f.Name] {
				continue
			}
			if key == "" || key == "-" {
				t.Errorf("%s.%s has no toml tag", path, f.Name)
				continue
			}
			ft := f.Type
			if ft.Kind() == reflect.Slice {
				ft = ft.Elem()
			}
			if isTable(ft) {
				walk(keyPath(path, key), ft)
			}
		}
	}
	walk("", reflect.TypeFor[Config]())
}

// TestValidateNamesRealKeys holds validate.go to the toml tags: every
// dotted key it names, as a problem's key or in a message, is a key of
// Config.
func TestValidateNamesRealKeys(t *testing.T) {
	src, err := os.ReadFile("validate.go")
	if err != nil {
		t.Fatal(err)
	}
	names := regexp.MustCompile(`\b(executor|guard|prompt|loop|scrub|review)(\.[a-z_]+)+`).FindAllString(string(src), -1)
	if len(names) < 10 {
		t.Fatalf("found only %d key names in validate.go: %q", len(names), names)
	}
	for _, name := range names {
		typ := reflect.TypeFor[Config]()
		for _, part := range strings.Split(name, ".") {
			i, ok := fieldsOf(typ).index[part]
			if !ok {
				t.Errorf("validate.go names %q, which is not a key", name)
				break
			}
			if typ = typ.FieldByIndex(i).Type; typ.Kind() == reflect.Slice {
				typ = typ.Elem()
			}
			if !isTable(typ) {
				break
			}
		}
	}
}

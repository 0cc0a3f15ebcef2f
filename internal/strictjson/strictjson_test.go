package strictjson

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestDecodeSyntaxErrors pins the wording and the place of every kind of
// syntax error.
func TestDecodeSyntaxErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `line 1, column 1: empty input: expected a JSON value`},
		{"  ", `line 1, column 3: empty input: expected a JSON value`},
		{"{", `line 1, column 2: unexpected end of input: expected a quoted object key`},
		{`{"a"`, `line 1, column 5: unexpected end of input: expected ':' after object key`},
		{`{"a":`, `line 1, column 6: unexpected end of input: expected a value`},
		{`{"a":1`, `line 1, column 7: unexpected end of input: expected ',' or '}'`},
		{`{"a":1,`, `line 1, column 8: unexpected end of input: expected a quoted object key`},
		{`[`, `line 1, column 2: unexpected end of input: expected a value`},
		{`[1`, `line 1, column 3: unexpected end of input: expected ',' or ']'`},
		{`[1,`, `line 1, column 4: unexpected end of input: expected a value`},
		{`{"a":"b`, `line 1, column 6: unterminated string`},
		{`"abc`, `line 1, column 1: unterminated string`},
		{`tru`, `line 1, column 1: invalid literal: expected "true"`},
		{`{"a":nul}`, `line 1, column 6: invalid literal: expected "null"`},
		{`1.`, `line 1, column 3: invalid number: digits expected after the decimal point`},
		{`1e`, `line 1, column 3: invalid number: digits expected in the exponent`},
		{`-`, `line 1, column 2: invalid number`},
		{`{"a":-x}`, `line 1, column 7: invalid number`},
		{`{"a":1.x}`, `line 1, column 8: invalid number: digits expected after the decimal point`},
		{`{"a":1e-x}`, `line 1, column 9: invalid number: digits expected in the exponent`},
		{`{"a":1,}`, `line 1, column 8: unexpected '}': expected a quoted object key`},
		{`{"a" 1}`, `line 1, column 6: unexpected '1': expected ':' after object key`},
		{`{"a":1 "b":2}`, `line 1, column 8: unexpected '"': expected ',' or '}'`},
		{`[1 2]`, `line 1, column 4: unexpected '2': expected ',' or ']'`},
		{`[1,]`, `line 1, column 4: unexpected ']': expected a value`},
		{`{1:2}`, `line 1, column 2: unexpected '1': expected a quoted object key`},
		{`{]`, `line 1, column 2: unexpected ']': expected a quoted object key`},
		{`{"a":]}`, `line 1, column 6: unexpected ']': expected a value`},
		{`[}`, `line 1, column 2: unexpected '}': expected a value`},
		{`x`, `line 1, column 1: unexpected 'x': expected a value`},
		{"\ufeff{}", `line 1, column 1: unexpected '\ufeff': expected a value`},
		{`{} {}`, `line 1, column 4: unexpected '{' after the JSON value`},
		{`{"a":1}}`, `line 1, column 8: unexpected '}' after the JSON value`},
		{`01`, `line 1, column 2: unexpected '1' after the JSON value`},
		{`"\q"`, `line 1, column 2: invalid escape sequence`},
		{`{"a":"\u12x4"}`, `line 1, column 7: invalid \u escape`},
		{"\"a\nb\"", `line 1, column 3: control character in string: escape it`},
		{"{\n  \"a\": 1,\n  \"a\": 2\n}", `line 3, column 3: duplicate key "a"`},
		{`{"x":{"y":[1,{"a":1,"a":2}]}}`, `line 1, column 21: duplicate key "a"`},
		{"\"\xff\"", `line 1, column 2: invalid UTF-8`},
		{"\"é\n", `line 1, column 3: control character in string: escape it`},
	}
	for _, tt := range tests {
		var v any
		err := Decode([]byte(tt.in), &v, 0)
		var se *SyntaxError
		if !errors.As(err, &se) || err.Error() != tt.want {
			t.Errorf("Decode(%q) = %v, want %s", tt.in, err, tt.want)
		}
	}
}

func TestDecodeAccepts(t *testing.T) {
	var v struct {
		S string  `json:"s"`
		N float64 `json:"n"`
		B bool    `json:"b"`
		Z *int    `json:"z"`
		A []any   `json:"a"`
		L string  `json:"l"`
	}
	err := Decode([]byte(` {"s":"a\u00e9\n","n":-1.5e3,"b":true,"z":null,"a":[1,{}],"l":"\ud800x"} `), &v, 0)
	if err != nil {
		t.Fatal(err)
	}
	if v.S != "aé\n" || v.N != -1500 || !v.B || v.Z != nil || len(v.A) != 2 || v.L != "\ufffdx" {
		t.Errorf("decoded %+v", v)
	}
}

func TestDecodeDepth(t *testing.T) {
	deep := strings.Repeat("[", 20) + strings.Repeat("]", 20)
	var v any
	if err := Decode([]byte(deep), &v, 10); err == nil || err.Error() != "line 1, column 11: nesting deeper than 10 levels" {
		t.Fatalf("want depth error, got %v", err)
	}
	if err := Decode([]byte(deep), &v, 20); err != nil {
		t.Fatalf("depth 20 should decode: %v", err)
	}
	// The depth is checked before the types: a list nested too deep where
	// strings belong is a nesting error, as is one hidden in a string.
	var typed struct {
		L []string `json:"l"`
		S string   `json:"s"`
	}
	if err := Decode([]byte(`{"l":`+deep+`}`), &typed, 10); err == nil || !strings.Contains(err.Error(), "nesting deeper than 10") {
		t.Errorf("want depth error, got %v", err)
	}
	if err := Decode([]byte(`{"s":"`+deep+`"}`), &typed, 10); err != nil {
		t.Errorf("brackets in a string count: %v", err)
	}
	// Nesting after the value is not looked at: the value ended.
	if err := Decode([]byte(`{"s":"x"} `+deep), &typed, 10); err == nil || !strings.Contains(err.Error(), "column 11: unexpected '[' after the JSON value") {
		t.Errorf("want the trailing data, got %v", err)
	}
	// A syntax error before the deep part comes first.
	if err := Decode([]byte(`{"s":"x",,"l":`+deep+`}`), &typed, 10); err == nil || !strings.Contains(err.Error(), "column 10: unexpected ','") {
		t.Errorf("want the syntax error, got %v", err)
	}
}

func TestDecodeSemanticErrors(t *testing.T) {
	type inner struct {
		N  int       `json:"n"`
		At time.Time `json:"at"`
	}
	var dst struct {
		A     int      `json:"a"`
		Inner *inner   `json:"inner"`
		List  []string `json:"list"`
	}
	tests := []struct{ in, want string }{
		{`{"a":1,"b":2}`, `unknown field "b" (line 1, column 8)`},
		{"{\n\"a\": \"x\"}", `line 2, column 6: field "a": expected int, found string`},
		{`{"inner":{"n":1e400}}`, `line 1, column 15: field "inner.n": expected int, found number 1e400`},
		{`{"inner":{"n":1.5}}`, `line 1, column 15: field "inner.n": expected int, found number 1.5`},
		{`{"list":["a",2]}`, `line 1, column 14: field "list.1": expected string, found number 2`},
		{`{"inner":{"x":1}}`, `unknown field "x" (line 1, column 11)`},
		{`{"inner":{"at":"yesterday"}}`, `line 1, column 16: field "inner.at": `},
		{`[]`, `line 1, column 1: expected struct`},
		{"{\n  \"A\":1}", `unknown field "A" (line 2, column 3)`},
	}
	for _, tt := range tests {
		err := Decode([]byte(tt.in), &dst, 0)
		var se *SyntaxError
		if !errors.As(err, &se) || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("Decode(%s) = %v, want %s", tt.in, err, tt.want)
		}
	}
}

func TestDecodeUnknownField(t *testing.T) {
	var dst struct{ A int }
	err := Decode([]byte(`{"A":1,"B":2}`), &dst, 0)
	if err == nil || !strings.Contains(err.Error(), `unknown field "B"`) {
		t.Fatalf("want unknown field error, got %v", err)
	}
	err = Decode([]byte("{\n\"A\": \"x\"}"), &dst, 0)
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("want positioned type error, got %v", err)
	}
}

// FuzzDecode holds Decode to encoding/json: what it accepts is valid
// JSON, and every refusal is placed inside the input.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{}`, `[1,2]`, `{"a":{"b":[true,false,null]}}`, `"\u12"`, `-0.1e+5`, `{"a":1,"a":2}`,
		`{"n":1,"s":"x","l":["a"],"o":{"n":2}}`, `{"n":"x"}`, `{"q":1}`, `[[[[[[[[[[[[]]]]]]]]]]]]`} {
		f.Add([]byte(s))
	}
	type obj struct {
		N int      `json:"n"`
		S string   `json:"s"`
		L []string `json:"l"`
		O *obj     `json:"o"`
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		var o obj
		for _, dst := range []any{&v, &o} {
			err := Decode(data, dst, 8)
			if err == nil {
				if !json.Valid(data) {
					t.Fatalf("Decode accepted invalid JSON %q", data)
				}
				continue
			}
			var se *SyntaxError
			if !errors.As(err, &se) || se.Offset < 0 || se.Offset > len(data) || se.Line < 1 || se.Col < 1 {
				t.Fatalf("Decode(%q) error %#v is not placed in the input", data, err)
			}
		}
	})
}

package strictjson

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// sameAsReference checks that Parse, Check and a Scanner that reads
// everything with its typed methods agree with refParse on data: the same
// Value tree, or the same error at the same position.
func sameAsReference(t *testing.T, data []byte, maxDepth int) {
	t.Helper()
	want, wantErr := refParse(data, maxDepth)
	got, gotErr := Parse(data, maxDepth)
	if !sameErr(gotErr, wantErr) {
		t.Fatalf("Parse(%q) error = %v, reference %v", data, gotErr, wantErr)
	}
	if wantErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("Parse(%q) = %s, reference %s", data, dump(got), dump(want))
	}
	if err := Check(data, maxDepth); !sameErr(err, wantErr) {
		t.Fatalf("Check(%q) = %v, reference %v", data, err, wantErr)
	}
	s := NewScanner(data, maxDepth)
	v, err := readTyped(s)
	if err == nil {
		err = s.End()
	}
	if !sameErr(err, wantErr) {
		t.Fatalf("typed scan of %q: error = %v, reference %v", data, err, wantErr)
	}
	if wantErr == nil && !reflect.DeepEqual(v, dropEveryThird(want)) {
		t.Fatalf("typed scan of %q = %s, reference %s", data, dump(v), dump(want))
	}
}

// readTyped reads a value with Peek and the typed methods, the way a
// converter does, leaving every third object member unread (skipped).
func readTyped(s *Scanner) (*Value, error) {
	k, off, err := s.Peek()
	if err != nil {
		return nil, err
	}
	v := &Value{Kind: k, Offset: off}
	switch k {
	case Object:
		n := 0
		err = s.Object(func(key []byte, keyOff int) error {
			n++
			if n%3 == 0 {
				return nil // left unread: the scanner skips it
			}
			elem, err := readTyped(s)
			if err == nil {
				v.Members = append(v.Members, Member{Key: string(key), KeyOffset: keyOff, Value: elem})
			}
			return err
		})
	case Array:
		err = s.Array(func(int) error {
			elem, err := readTyped(s)
			if err == nil {
				v.Array = append(v.Array, elem)
			}
			return err
		})
	case String:
		v.Str, err = s.String()
	case Number:
		v.Str, err = s.Number()
	case Bool:
		v.Bool, err = s.Bool()
	default:
		err = s.Null()
	}
	if err != nil {
		return nil, err
	}
	return v, nil
}

// dropEveryThird removes what readTyped leaves unread, so that its result
// compares with a full parse.
func dropEveryThird(v *Value) *Value {
	if v == nil {
		return nil
	}
	out := *v
	out.Members = nil
	for i, m := range v.Members {
		if (i+1)%3 == 0 {
			continue
		}
		m.Value = dropEveryThird(m.Value)
		out.Members = append(out.Members, m)
	}
	out.Array = nil
	for _, e := range v.Array {
		out.Array = append(out.Array, dropEveryThird(e))
	}
	return &out
}

func sameErr(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var sa, sb *SyntaxError
	if errors.As(a, &sa) && errors.As(b, &sb) {
		return *sa == *sb
	}
	return a.Error() == b.Error()
}

func dump(v *Value) string {
	var b strings.Builder
	var walk func(v *Value)
	walk = func(v *Value) {
		if v == nil {
			b.WriteString("<nil>")
			return
		}
		b.WriteString(v.Kind.String())
		switch v.Kind {
		case Object:
			b.WriteString("{")
			for _, m := range v.Members {
				b.WriteString(m.Key + ":")
				walk(m.Value)
				b.WriteString(",")
			}
			b.WriteString("}")
		case Array:
			b.WriteString("[")
			for _, e := range v.Array {
				walk(e)
				b.WriteString(",")
			}
			b.WriteString("]")
		default:
			b.WriteString("(" + v.Str + ")")
		}
	}
	walk(v)
	return b.String()
}

var referenceCases = []string{
	`{}`, `[]`, `[1,2]`, ` {"a" : {"b":[true,false,null]}} `, `"\u12"`, `-0.1e+5`, `{"a":1,"a":2}`,
	`{"a":1,"\u0061":2}`, `{"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k1":0}`,
	`{"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":0}`,
	"", "  ", "\n\t", `{`, `[`, `{"a"`, `{"a":`, `{"a":1`, `{"a":1,`, `[1,`, `[1 2]`, `{"a" 1}`, `{1:2}`,
	`{"a":1,}`, `[1,]`, `{} {}`, `01`, `-`, `1.`, `1e`, `1e+`, `tru`, `nul`, `fals`, `"abc`, `"a\`,
	"\"a\nb\"", "\"\xff\"", `"\q"`, `"\ud800"`, `"\ud83d\ude00"`, `"é\u00e9"`, `[[[[]]]]`, `{"a":[{"b":{}}]}`,
	`@`, `{"a":@}`, `[-]`, `{"a":{"a":{"a":1,"a":2}}}`, `{"a":"x","b":[{"a":1,"a":1}]}`,
}

func TestScannerMatchesReference(t *testing.T) {
	for _, c := range referenceCases {
		for _, depth := range []int{0, 1, 2, 3} {
			sameAsReference(t, []byte(c), depth)
		}
	}
}

func TestScannerSkipsUnreadMembers(t *testing.T) {
	data := []byte(`{"a": 1, "b": [2, {"c": 3}], "c": {"d": [4]}, "e": "five", "f": null, "g": true}`)
	want, err := Parse(data, 0)
	if err != nil {
		t.Fatal(err)
	}
	s := NewScanner(data, 0)
	got, err := readTyped(s)
	if err == nil {
		err = s.End()
	}
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, dropEveryThird(want)) {
		t.Errorf("got %s, want %s", dump(got), dump(dropEveryThird(want)))
	}
}

func FuzzScannerMatchesReference(f *testing.F) {
	for _, c := range referenceCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsReference(t, data, 8)
	})
}

package tree

import (
	"strings"
	"testing"
)

func TestSpendFieldsRoundTrip(t *testing.T) {
	src := doc(`{"id": "root", "title": "R", "max_cost_usd": 2.5, "executors": ["small", "large"], "children": [
		{"id": "a", "title": "A", "max_tokens": 40000},
		{"id": "b", "title": "B", "max_cost_usd": 0, "executors": ["large"]}]}`)
	tr := mustParse(t, src)
	out := string(Marshal(tr))
	for _, want := range []string{`"max_cost_usd": 2.5,`, `"max_tokens": 40000`, `"max_cost_usd": 0,`, "\"executors\": [\n      \"small\",\n      \"large\"\n    ]"} {
		if !strings.Contains(out, want) {
			t.Errorf("canonical tree lacks %q:\n%s", want, out)
		}
	}
	again := mustParse(t, out)
	if string(Marshal(again)) != out {
		t.Fatalf("not stable:\n%s\nthen\n%s", out, Marshal(again))
	}
	c := tr.Clone()
	*c.Root.MaxCostUSD = 9
	c.Root.Executors[0] = "x"
	if *tr.Root.MaxCostUSD != 2.5 || tr.Root.Executors[0] != "small" {
		t.Fatalf("the clone shares the spend fields: %v %q", *tr.Root.MaxCostUSD, tr.Root.Executors)
	}

	ix := NewIndex(tr)
	a := SpendOf(ix, "a")
	if a.MaxCostUSD == nil || *a.MaxCostUSD != 2.5 || a.CostFrom != "root" || a.MaxTokens == nil || *a.MaxTokens != 40000 || a.TokensFrom != "a" ||
		strings.Join(a.Executors, ",") != "small,large" || a.ExecutorsFrom != "root" {
		t.Fatalf("SpendOf(a) = %+v", a)
	}
	b := SpendOf(ix, "b")
	if b.MaxCostUSD == nil || *b.MaxCostUSD != 0 || b.CostFrom != "b" || b.MaxTokens != nil || strings.Join(b.Executors, ",") != "large" {
		t.Fatalf("SpendOf(b) = %+v", b)
	}
}

func TestSpendFieldProblems(t *testing.T) {
	tests := []struct{ name, root, want string }{
		{"negative cost", `{"id": "a", "title": "A", "max_cost_usd": -1}`, `a: line 1, column 66: field "max_cost_usd" must be US dollars, 0 or more`},
		{"cost as a string", `{"id": "a", "title": "A", "max_cost_usd": "5"}`, `field "max_cost_usd" must be a number of US dollars, found string`},
		{"tokens not whole", `{"id": "a", "title": "A", "max_tokens": 1.5}`, `field "max_tokens" must be a whole number, found 1.5`},
		{"negative tokens", `{"id": "a", "title": "A", "max_tokens": -3}`, `field "max_tokens" must be 0 or more`},
		{"bad executor name", `{"id": "a", "title": "A", "executors": ["ok", "my agent"]}`, `field "executors" item 2: "my agent" is not an executor name`},
		{"executors not strings", `{"id": "a", "title": "A", "executors": [1]}`, `field "executors" item 1 must be a string, found number`},
		{"alias", `{"id": "a", "title": "A", "budget": 3}`, `unknown field "budget" (did you mean "max_cost_usd"?)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(file, []byte(doc(tc.root)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

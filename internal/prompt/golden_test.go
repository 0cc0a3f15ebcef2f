package prompt

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestGoldenPrompt(t *testing.T) {
	pack, err := Build(calcInput(t))
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "calc_ops.prompt.md")
	if *update {
		if err := os.WriteFile(golden, []byte(pack.Text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if pack.Text != string(want) {
		t.Errorf("prompt differs from %s (run go test -update after checking the change):\n%s", golden, pack.Text)
	}
}

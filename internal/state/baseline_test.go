package state

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestBaselineRoundTrip: a baseline is kept under its key, read back with
// its tests sorted for PassedTest, and not taken for other guards.
func TestBaselineRoundTrip(t *testing.T) {
	p := NewPaths(t.TempDir())
	b := &Baseline{Key: "0123456789abcdef", Guards: "g1", From: "preflight", At: time.Now().UTC(), Results: []BaselineGuard{
		{Name: "test", Report: "go-json", Passing: []string{"p/TestB", "p/TestA"}, Failing: []string{"p/TestC"}},
	}}
	if err := SaveBaseline(p, b); err != nil {
		t.Fatal(err)
	}
	got, err := LoadBaseline(p, "0123456789abcdef", "g1")
	if err != nil || got == nil {
		t.Fatalf("LoadBaseline = %v, %v", got, err)
	}
	g := got.Guard("test")
	if g == nil || !g.HasReport() || !g.PassedTest("p/TestA") || !g.PassedTest("p/TestB") || g.PassedTest("p/TestC") {
		t.Errorf("guard %+v", g)
	}
	if other, err := LoadBaseline(p, "0123456789abcdef", "g2"); err != nil || other != nil {
		t.Errorf("with other guards: %v, %v; want none", other, err)
	}
	if none, err := LoadBaseline(p, "fedcba9876543210", "g1"); err != nil || none != nil {
		t.Errorf("another commit: %v, %v; want none", none, err)
	}
	if err := SaveBaseline(p, &Baseline{Key: "../escape"}); err == nil {
		t.Error("a key that is not a commit was saved")
	}
	// A damaged file is an error naming it, not a silent baseline.
	os.WriteFile(p.BaselineFile("0123456789abcdef"), []byte("{"), 0o644)
	if _, err := LoadBaseline(p, "0123456789abcdef", "g1"); err == nil {
		t.Error("a damaged baseline read without error")
	}
}

// TestPruneBaselines keeps the newest and those in use.
func TestPruneBaselines(t *testing.T) {
	p := NewPaths(t.TempDir())
	keys := []string{"aaaaaaa", "bbbbbbb", "ccccccc", "ddddddd"}
	for i, k := range keys {
		if err := SaveBaseline(p, &Baseline{Key: k}); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(time.Duration(i-10) * time.Minute)
		os.Chtimes(p.BaselineFile(k), at, at)
	}
	if err := PruneBaselines(p, 2, "aaaaaaa"); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(p.BaselinesDir(), "*.json"))
	want := map[string]bool{p.BaselineFile("aaaaaaa"): true, p.BaselineFile("ccccccc"): true, p.BaselineFile("ddddddd"): true}
	if len(left) != 3 {
		t.Fatalf("left %v; want the two newest and the one in use", left)
	}
	for _, f := range left {
		if !want[f] {
			t.Errorf("kept %s", f)
		}
	}
}

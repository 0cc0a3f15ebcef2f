package prompt

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/tree"
)

func TestTreeSummarySmallTreeShowsEverything(t *testing.T) {
	tr := calcTree()
	text, shown, omitted := TreeSummary(tr, tree.NewIndex(tr), "ops", 3, 0)
	want := summaryLegend +
		"[ ] calc — Calculator CLI\n" +
		"  [x] parse — Parse arguments\n" +
		"  [>] ops — Operations (attempts 1/5)\n" +
		"  [!] docs — Document usage (attempts 3/3; blocked: attempts exhausted)\n" +
		"  [ ] release — Release\n" +
		"    [ ] tag — Tag v1\n" +
		"Shown 6 of 6 nodes; 0 left out.\n"
	if text != want || shown != 6 || omitted != 0 {
		t.Errorf("got shown %d omitted %d:\n%s\nwant:\n%s", shown, omitted, text, want)
	}
	if again, _, _ := TreeSummary(tr, nil, "ops", 3, 0); again != text {
		t.Errorf("without an index:\n%s", again)
	}
	// An index of another tree (a copy) is not trusted.
	if again, _, _ := TreeSummary(tr, tree.NewIndex(calcTree()), "ops", 3, 0); again != text {
		t.Errorf("with the index of another tree:\n%s", again)
	}
}

var moreRE = regexp.MustCompile(`^( *)… (\d+) more$`)
var nodeRE = regexp.MustCompile(`^( *)\[(.)\] (\S+)`)

// parseOutline returns the ids shown with their depth, and checks the
// outline's shape: each node line is at most one level deeper than the line
// before it.
func parseOutline(t *testing.T, text string) map[string]int {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	depth := map[string]int{}
	prev := -1
	for _, line := range lines[1 : len(lines)-1] {
		if m := moreRE.FindStringSubmatch(line); m != nil {
			if n, _ := strconv.Atoi(m[2]); n <= 0 {
				t.Errorf("bad elision line %q", line)
			}
			continue
		}
		m := nodeRE.FindStringSubmatch(line)
		if m == nil {
			if strings.HasPrefix(line, "… ") {
				continue
			}
			t.Fatalf("unexpected outline line %q", line)
		}
		d := len(m[1]) / 2
		if d > prev+1 {
			t.Errorf("line %q jumps from depth %d to %d", line, prev, d)
		}
		prev = d
		depth[m[3]] = d
	}
	return depth
}

func TestTreeSummaryHugeTreeKeepsNeighbourhood(t *testing.T) {
	tr := wideTree(100_000, 10)
	sel, path := deepest(tr)
	// Select the parent of the deepest node, so it has children to show.
	parentSel := path[len(path)-2]
	ix := tree.NewIndex(tr)
	for _, tc := range []struct {
		name string
		sel  *tree.Node
		path []*tree.Node
	}{
		{"leaf", sel, path},
		{"inner", parentSel, path[:len(path)-1]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, shown, omitted := TreeSummary(tr, ix, tc.sel.ID, 3, 0)
			if again, _, _ := TreeSummary(tr, nil, tc.sel.ID, 3, 0); again != text {
				t.Errorf("the summary differs without an index")
			}
			if len(text) > TreeSummaryMaxBytes {
				t.Errorf("summary is %d bytes, over %d", len(text), TreeSummaryMaxBytes)
			}
			if n := strings.Count(text, "\n"); n > TreeSummaryMaxLines {
				t.Errorf("summary has %d lines", n)
			}
			if shown+omitted != 100_000 || omitted == 0 {
				t.Errorf("shown %d + omitted %d, want 100000 with some omitted", shown, omitted)
			}
			if want := fmt.Sprintf("Shown %d of 100000 nodes; %d left out.\n", shown, omitted); !strings.HasSuffix(text, want) {
				t.Errorf("summary does not end with %q", want)
			}
			depth := parseOutline(t, text)
			if len(depth) != shown {
				t.Errorf("%d node lines, shown = %d", len(depth), shown)
			}
			for i, a := range tc.path {
				if d, ok := depth[a.ID]; !ok || d != i {
					t.Errorf("ancestor %s at depth %d: shown %v at depth %d", a.ID, i, ok, d)
				}
			}
			if !strings.Contains(text, "[>] "+tc.sel.ID+" ") {
				t.Errorf("selected node %s not marked", tc.sel.ID)
			}
			parent := tc.path[len(tc.path)-2]
			for _, s := range parent.Children {
				if _, ok := depth[s.ID]; !ok {
					t.Errorf("sibling %s missing", s.ID)
				}
			}
			for _, c := range tc.sel.Children {
				if _, ok := depth[c.ID]; !ok {
					t.Errorf("child %s missing", c.ID)
				}
			}
			if !strings.Contains(text, "… ") {
				t.Error("no elision lines in a summary that leaves nodes out")
			}
		})
	}
}

func TestTreeSummaryWideSiblingsNearestFirst(t *testing.T) {
	root := &tree.Node{ID: "root", Title: "root"}
	for i := range 5000 {
		root.Children = append(root.Children, &tree.Node{ID: fmt.Sprintf("s%04d", i), Title: "sibling"})
	}
	tr := &tree.Tree{Version: 1, Root: root}
	text, shown, omitted := TreeSummary(tr, nil, "s2500", 3, 2048)
	if len(text) > 2048 || shown+omitted != 5001 {
		t.Fatalf("len %d, shown %d, omitted %d", len(text), shown, omitted)
	}
	depth := parseOutline(t, text)
	for _, id := range []string{"root", "s2499", "s2500", "s2501"} {
		if _, ok := depth[id]; !ok {
			t.Errorf("%s missing:\n%s", id, text)
		}
	}
	if _, ok := depth["s0000"]; ok {
		t.Error("a far sibling was shown before near ones")
	}
	lines := strings.Split(text, "\n")
	if !moreRE.MatchString(lines[2]) || !strings.Contains(text, "  … 2") {
		t.Errorf("hidden runs before and after the window are not summarised:\n%s", text)
	}
}

func TestTreeSummaryDeepPathKeepsLowerPart(t *testing.T) {
	// A chain deeper than the byte cap can show: the lower levels stay.
	root := &tree.Node{ID: "l0", Title: strings.Repeat("long title ", 7)}
	n := root
	for i := 1; i < 120; i++ {
		c := &tree.Node{ID: fmt.Sprintf("l%d", i), Title: strings.Repeat("long title ", 7)}
		n.Children = []*tree.Node{c}
		n = c
	}
	text, shown, omitted := TreeSummary(&tree.Tree{Version: 1, Root: root}, nil, "l119", 3, 4096)
	if len(text) > 4096 || shown == 0 || shown+omitted != 120 {
		t.Fatalf("len %d, shown %d, omitted %d", len(text), shown, omitted)
	}
	if !strings.Contains(text, "[>] l119 ") || !strings.Contains(text, fmt.Sprintf("… %d higher levels not shown", 120-shown)) {
		t.Errorf("lower part of the path not kept:\n%s", text)
	}
}

func TestTreeSummaryTinyBound(t *testing.T) {
	text, shown, omitted := TreeSummary(calcTree(), nil, "ops", 3, 10)
	if len(text) > 10 || shown != 0 || omitted != 6 {
		t.Errorf("got %q, shown %d, omitted %d", text, shown, omitted)
	}
}

func TestTreeSummaryWithoutSelection(t *testing.T) {
	text, shown, omitted := TreeSummary(wideTree(1000, 10), nil, "", 3, 1024)
	if len(text) > 1024 || shown == 0 || shown+omitted != 1000 {
		t.Errorf("len %d, shown %d, omitted %d", len(text), shown, omitted)
	}
	if strings.Contains(text, "[>] n") {
		t.Error("a node is marked selected")
	}
	parseOutline(t, text)
}

func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			tr := wideTree(n, 10)
			sel, path := deepest(tr)
			ids := make([]string, len(path))
			for i, p := range path {
				ids[i] = p.ID
			}
			in := calcInput(b)
			in.Tree, in.Index, in.Selected, in.SelectedPath = tr, tree.NewIndex(tr), sel, strings.Join(ids, "/")
			b.Run("index", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := Build(in); err != nil {
						b.Fatal(err)
					}
				}
			})
			noIndex := in
			noIndex.Index = nil
			b.Run("walk", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := Build(noIndex); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

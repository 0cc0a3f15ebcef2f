package prompt

import (
	"fmt"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/tree"
)

// BenchmarkBuildBounded builds the prompt of the deepest node of trees of
// 1,000 to 100,000 nodes (fan-out 10) with the default budget, and reports
// the size of the tree summary and of the whole prompt: both stay bounded
// (TreeSummaryMaxBytes, the budget) however large the tree, and so does
// the time, since the outline is built from the selected node outwards
// and never for the whole tree.
func BenchmarkBuildBounded(b *testing.B) {
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
			in.Budget = 40 << 10
			var pack *Pack
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if pack, err = Build(in); err != nil {
					b.Fatal(err)
				}
			}
			for _, s := range pack.Sections {
				if s.Key == KeyTree {
					b.ReportMetric(float64(s.Bytes), "summary-bytes")
				}
			}
			b.ReportMetric(float64(len(pack.Text)), "prompt-bytes")
		})
	}
}

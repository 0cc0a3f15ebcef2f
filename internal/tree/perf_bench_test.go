package tree

import (
	"fmt"
	"testing"
)

// BenchmarkMarshal is the canonical encoding alone, without the write;
// BenchmarkMarshalLibrary the same bytes written by go-json-experiment/json
// from the struct tags, which Marshal is measured against.
func BenchmarkMarshal(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			tr := genTree(n)
			b.SetBytes(int64(len(Marshal(tr))))
			b.ReportAllocs()
			for b.Loop() {
				Marshal(tr)
			}
		})
	}
}

func BenchmarkMarshalLibrary(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			tr := genTree(n)
			b.SetBytes(int64(len(Marshal(tr))))
			b.ReportAllocs()
			for b.Loop() {
				libraryMarshal(b, tr)
			}
		})
	}
}

// BenchmarkValidate is the check Save makes before every write.
func BenchmarkValidate(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			tr := genTree(n)
			b.ReportAllocs()
			for b.Loop() {
				if err := tr.Validate(""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLoadChain loads trees whose leaves each depend on the previous
// one: cycle detection walks every dependency, and its cost must grow
// linearly with them.
func BenchmarkLoadChain(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			data := []byte(chainTree(n, false))
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse("chain.json", data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

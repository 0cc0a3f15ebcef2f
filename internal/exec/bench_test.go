package executor

import (
	"strings"
	"testing"
)

// BenchmarkFindMessage measures the lookup over a full 1 MiB stdout tail,
// including inputs built to make the object scanner backtrack.
func BenchmarkFindMessage(b *testing.B) {
	fill := func(unit string) []byte {
		return []byte(strings.Repeat(unit, (1<<20)/len(unit)))
	}
	inputs := map[string][]byte{
		"stream-json": fill(`{"type":"assistant","message":{"content":[{"type":"text","text":"working on it"}]}}` + "\n"),
		"prose":       fill("The agent thinks about {braces} and \"quotes\" a lot.\n"),
		"deep-open":   fill(`{"a":[`),
		"open-keys":   fill(`{"a":1,`),
		"open-braces": fill(`{`),
		"nested-long": fill(`{"a":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,`),
	}
	for name, data := range inputs {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				FindMessage(nil, data)
			}
		})
	}
}

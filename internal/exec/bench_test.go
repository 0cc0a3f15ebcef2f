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

// BenchmarkEventStream measures the reading of stdout as it passes, over
// 4 MiB of Codex and Claude events and of plain text lines.
func BenchmarkEventStream(b *testing.B) {
	fill := func(unit string) []byte {
		return []byte(strings.Repeat(unit, (4<<20)/len(unit)))
	}
	inputs := map[string][]byte{
		"codex":  fill(`{"type":"item.completed","item":{"id":"item_7","type":"command_execution","command":"go test ./...","aggregated_output":"ok  \tgithub.com/x/y\t0.1s\n","exit_code":0,"status":"completed"}}` + "\n"),
		"claude": fill(`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Let me look at the result of the tests first."}]},"session_id":"s"}` + "\n"),
		"text":   fill(strings.Repeat("f", 63) + "\n"),
	}
	for name, data := range inputs {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				e := newEventStream()
				for i := 0; i < len(data); i += 32 << 10 {
					e.Write(data[i:min(i+32<<10, len(data))])
				}
				e.Close()
			}
		})
	}
}

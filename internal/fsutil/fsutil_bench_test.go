package fsutil

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkReplaceFile is the cost of one state-file write at each level
// of durability, on the file system of the temporary directory (set
// TMPDIR to measure another one): a 2 KB file, like run_state.json.
func BenchmarkReplaceFile(b *testing.B) {
	data := make([]byte, 2048)
	for i := range data {
		data[i] = 'a' + byte(i%26)
	}
	for _, tc := range []struct {
		name string
		d    Durability
	}{{"durable", Durable}, {"file_synced", FileSynced}, {"not_synced", NotSynced}} {
		b.Run(tc.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "state.json")
			for b.Loop() {
				if err := ReplaceFile(path, data, 0o644, tc.d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAppendLine is the cost of one journal record, fsynced or not.
func BenchmarkAppendLine(b *testing.B) {
	line := []byte(`{"time":"2026-01-01T00:00:00Z","iteration":12,"node":"n12","event":"recorded","outcome":"done"}` + "\n")
	for _, tc := range []struct {
		name string
		d    Durability
	}{{"fsync", Durable}, {"no_fsync", NotSynced}} {
		b.Run(tc.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "journal.jsonl")
			for b.Loop() {
				if err := AppendLineAs(path, line, tc.d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCreateFile is the cost of a new file in a new folder, which
// every iteration's run folder pays for each file it holds.
func BenchmarkCreateFile(b *testing.B) {
	dir := b.TempDir()
	i := 0
	for b.Loop() {
		i++
		sub := filepath.Join(dir, "run", string(rune('a'+i%26)), itoa(i))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, "prompt.md"), []byte("hello\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

func itoa(i int) string {
	var buf [20]byte
	n := len(buf)
	for {
		n--
		buf[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(buf[n:])
		}
	}
}

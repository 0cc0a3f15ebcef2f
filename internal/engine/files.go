package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/fsutil"
)

// Bounds of the run folder's files sent back: Temporal refuses payloads
// above 2 MiB by default. A larger file is cut to its tail, after a line
// saying so; the whole is kept on the worker only until the iteration
// ends.
const (
	fileLimit  = 384 << 10
	filesLimit = 1536 << 10
)

// collectFiles reads the run folder's files to send back, each cut to
// its tail within fileLimit, all within filesLimit: the agent's and the
// guards' own files first, then the others, smallest first.
func collectFiles(dir string) map[string][]byte {
	type file struct {
		rel  string
		size int64
		rank int
	}
	first := map[string]int{"last_message.txt": 1, "agent_exit.json": 2, "found.json": 3, "failure.log": 4,
		executor.LogFileName: 5, executor.EventsFileName: 6, "guard.log": 7}
	var found []file
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "prompt.md" || rel == "output.schema.json" {
			return nil // the coordinator's own
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		rank, ok := first[rel]
		if !ok {
			rank = len(first) + 1
		}
		found = append(found, file{rel, info.Size(), rank})
		return nil
	})
	slices.SortFunc(found, func(a, b file) int {
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		return int(a.size - b.size)
	})
	files := map[string][]byte{}
	total := 0
	for _, f := range found {
		room := min(fileLimit, filesLimit-total)
		if room <= 0 {
			break
		}
		data, err := readTail(filepath.Join(dir, filepath.FromSlash(f.rel)), room)
		if err != nil {
			continue
		}
		total += len(data)
		files[f.rel] = data
	}
	return files
}

// readTail reads the last limit bytes of path (fsutil.ReadEnd: no named
// pipe or device, which an unconfined agent could have left), after a
// line saying how much was left out when it is larger.
func readTail(path string, limit int) ([]byte, error) {
	data, start, err := fsutil.ReadEnd(path, int64(limit))
	if err != nil || start == 0 {
		return data, err
	}
	head := fmt.Sprintf("[runner worker: the first %d bytes were left out]\n", start)
	return append([]byte(head), data...), nil
}

// logEnd is the last lines of the log at path, for an error that names
// it: the log goes with the iteration's run folder on the worker, and
// the error reaches the coordinator. "" when there is nothing to read.
func logEnd(path string) string {
	data, start, err := fsutil.ReadEnd(path, 1<<10)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if err != nil || len(data) == 0 {
		return ""
	}
	if start > 0 && len(lines) > 1 {
		lines = lines[1:] // cut
	}
	return "; it ends: " + strings.Join(lines[max(0, len(lines)-4):], " | ")
}

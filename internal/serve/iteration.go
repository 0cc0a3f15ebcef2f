package serve

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/state"
)

// runFiles are the files of a run folder the dashboard shows, in this
// order, with how much of their head and tail. A file added here is
// shown by the page without any other change.
var runFiles = []struct {
	Name       string
	Head, Tail int64
}{
	{"prompt.md", 48 << 10, 16 << 10}, // the default prompt budget is 40 KiB: whole
	{"output.json", 16 << 10, 16 << 10},
	{"executor.log", 32 << 10, 32 << 10},
	{"guard.log", 32 << 10, 32 << 10},
	{"failure.log", 32 << 10, 32 << 10},
}

// Detail is everything the dashboard shows of one iteration.
type Detail struct {
	Iteration int  `json:"iteration"`
	InFlight  bool `json:"in_flight"`
	// Meta is meta.json as the runner wrote it, every field kept (a newer
	// runner's too: checkpoint, attempt_ref, ...); null before the
	// iteration's agent is done, or once its run folder is pruned.
	Meta json.RawMessage `json:"meta"`
	// Journal holds the journal's records of the iteration.
	Journal []state.Record `json:"journal"`
	// Files lists the run folder's files; Logs has the head and tail of
	// those in runFiles that exist.
	Files []string `json:"files"`
	Logs  []Log    `json:"logs"`
}

// Log is the excerpt of one file of a run folder.
type Log struct {
	Name string `json:"name"`
	Excerpt
}

// loadDetail gathers iteration n. Its files are read bounded and their
// text escaped; the log of a file that cannot be read (a named pipe, a
// link) says why instead. The result is nil when nothing at all is known
// of n.
func loadDetail(p state.Paths, n, running int) *Detail {
	d := &Detail{Iteration: n, InFlight: n == running, Journal: journalRecords(p, n), Files: []string{}, Logs: []Log{}}
	if meta, err := readMeta(p, n); err == nil && meta != nil {
		d.Meta = meta
	}
	dir := p.RunDir(n)
	entries, _ := fsutil.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), fsutil.TempPrefix) {
			name := e.Name()
			if e.IsDir() {
				name += "/"
			}
			d.Files = append(d.Files, name)
		}
	}
	sort.Strings(d.Files)
	for _, f := range runFiles {
		ex, err := readExcerpt(filepath.Join(dir, f.Name), f.Head, f.Tail)
		switch {
		case err != nil:
			d.Logs = append(d.Logs, Log{Name: f.Name, Excerpt: Excerpt{Head: "cannot be shown: " + err.Error()}})
		case ex != nil:
			d.Logs = append(d.Logs, Log{Name: f.Name, Excerpt: *ex})
		}
	}
	if d.Meta == nil && len(d.Journal) == 0 && len(entries) == 0 && !d.InFlight {
		return nil
	}
	return d
}

// inertJSON rewrites a JSON document with every string, keys included,
// escaped by inert (control characters and bidi overrides written
// visibly), and numbers kept exactly as written. The page builds its DOM
// with textContent, so nothing in the data can become markup; this keeps
// text from the agent from acting on the display as well (a bidi override
// reordering a line).
func inertJSON(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(inertValue(v))
}

func inertValue(v any) any {
	switch x := v.(type) {
	case string:
		return inert.Text(x)
	case []any:
		for i := range x {
			x[i] = inertValue(x[i])
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[inert.Line(k)] = inertValue(e)
		}
		return out
	}
	return v
}

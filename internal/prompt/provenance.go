package prompt

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"time"

	"github.com/runner-cli/runner/internal/fsutil"
)

// Provenance is runs/NNNNNN/context.json: what went into the prompt
// (SPEC §9).
type Provenance struct {
	InjectionID string          `json:"injection_id"`
	Timestamp   time.Time       `json:"timestamp"`
	Iteration   int             `json:"iteration"`
	Node        string          `json:"node"`
	Budget      int             `json:"budget"`
	Sections    []SectionReport `json:"sections"`
	TotalBytes  int             `json:"total_bytes"`
	Redactions  map[string]int  `json:"redactions"`
}

// WriteRunFolder creates iteration n's run folder with the prompt sent
// (prompt.md) and its provenance (context.json): records for people,
// atomic, not fsynced (see BENCHMARKS.md, "Durable writes").
func WriteRunFolder(runDir string, n int, node string, pack *Pack) error {
	if err := fsutil.MkdirAll(runDir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", runDir, err)
	}
	if err := fsutil.ReplaceFile(filepath.Join(runDir, "prompt.md"), []byte(pack.Text), 0o644, fsutil.NotSynced); err != nil {
		return err
	}
	now := time.Now().UTC()
	red := pack.Redactions
	if red == nil {
		red = map[string]int{}
	}
	return fsutil.ReplaceJSON(filepath.Join(runDir, "context.json"), Provenance{
		InjectionID: InjectionID(now), Timestamp: now, Iteration: n, Node: node,
		Budget: pack.Budget, Sections: pack.Sections, TotalBytes: len(pack.Text), Redactions: red,
	}, fsutil.NotSynced)
}

// InjectionID is INJ-YYYYMMDD-HHMMSS-xxxxxx with six random hex digits.
func InjectionID(t time.Time) string {
	var b [3]byte
	rand.Read(b[:])
	return "INJ-" + t.Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

package strictjson

import (
	"strings"
	"testing"
	"time"
)

// benchState is shaped like run_state.json.
type benchState struct {
	Version     int       `json:"version"`
	Iteration   int       `json:"iteration"`
	LastNode    string    `json:"last_node"`
	LastStatus  string    `json:"last_status"`
	LastSummary string    `json:"last_summary"`
	LastGuard   string    `json:"last_guard"`
	Notes       []string  `json:"notes"`
	UpdatedAt   time.Time `json:"updated_at"`
	InFlight    *struct {
		Iteration int    `json:"iteration"`
		Node      string `json:"node"`
		Phase     string `json:"phase"`
	} `json:"in_flight"`
}

// BenchmarkDecode decodes a state file of about 4 KB, strictly.
func BenchmarkDecode(b *testing.B) {
	data := []byte(`{
  "version": 1,
  "iteration": 412,
  "last_node": "calc/ops/div",
  "last_status": "retry",
  "last_summary": "` + strings.Repeat("Divides by zero gracefully now; the parser still rejects \\\"1e3\\\". ", 40) + `",
  "last_guard": "fail",
  "notes": ["a", "b", "c", "d", "e", "f", "g", "h"],
  "updated_at": "2026-11-22T07:15:00.123456789Z",
  "in_flight": {"iteration": 413, "node": "calc/ops/div", "phase": "started"}
}
`)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var s benchState
		if err := Decode(data, &s, 16); err != nil {
			b.Fatal(err)
		}
	}
}

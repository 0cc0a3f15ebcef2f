package webhooks

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/log"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/scrub"
	"github.com/runner-cli/runner/internal/state"
)

func TestNotifyTamperText(t *testing.T) {
	var mu sync.Mutex
	var got []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var v map[string]any
		json.Unmarshal(data, &v)
		mu.Lock()
		got = append(got, v)
		mu.Unlock()
	}))
	defer srv.Close()
	cfg, err := config.Parse("config.toml", []byte("[[notify]]\nurl = \""+srv.URL+"\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := cfg.Scrubber()
	if err != nil {
		t.Fatal(err)
	}
	h := New("/home/me/repo", func() *config.Config { return cfg }, func(*config.Config) (*scrub.Scrubber, error) { return s, nil },
		log.New(io.Discard), 5*time.Second)
	h.Tamper(&state.Meta{Iteration: 4, NodePath: "app/a", Tamper: []state.TamperMeta{
		{Path: "tests/calc_test.go", Change: "modified", Kept: "tamper/tests/calc_test.go"}, {Path: ".runner/tree.json", Change: "modified"}}},
		".runner/runs/4")
	h.Send("tamper", "a text given by the caller")
	h.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0]["event"] != "tamper" || got[1]["event"] != "tamper" {
		t.Fatalf("got %v; want tamper twice", got)
	}
	if s, _ := got[0]["text"].(string); !strings.Contains(s, "task app/a (iteration 4) changed files it may not change: tests/calc_test.go (modified), .runner/tree.json (modified)") ||
		!strings.Contains(s, "`runner show 4`") {
		t.Errorf("the tamper notification: %s", s)
	}
}

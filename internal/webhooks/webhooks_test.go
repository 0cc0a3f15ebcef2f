package webhooks

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/log"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/scrub"
	"github.com/runner-cli/runner/internal/state"
)

func TestNotifyTamperText(t *testing.T) {
	bodies := make(chan string, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		bodies <- string(data)
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
	h.Close() // waits for the deliveries
	close(bodies)
	var got []string
	for b := range bodies {
		got = append(got, b)
	}
	if len(got) != 2 || !strings.Contains(got[0], `"event":"tamper"`) || !strings.Contains(got[1], `"event":"tamper"`) {
		t.Fatalf("got %q; want tamper twice", got)
	}
	if !strings.Contains(got[0], "task app/a (iteration 4) changed files it may not change: tests/calc_test.go (modified), .runner/tree.json (modified)") ||
		!strings.Contains(got[0], "`runner show 4`") {
		t.Errorf("the tamper notification: %s", got[0])
	}
}

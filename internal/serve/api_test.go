package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/state"
)

func TestTextComesBackInert(t *testing.T) {
	p := repo(t)
	_, ts := server(t, p, "", 0)
	for _, path := range []string{"/api/iterations/2", "/api/iterations/3", "/api/iterations", "/api/status", "/api/notes"} {
		resp := get(t, http.MethodGet, ts.URL+path)
		b := body(t, resp)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if strings.Contains(b, "<script") || strings.Contains(b, "<img") {
			t.Errorf("GET %s: markup in the response:\n%.400s", path, b)
		}
	}
	var d Detail
	resp := get(t, http.MethodGet, ts.URL+"/api/iterations/2")
	if err := json.Unmarshal([]byte(body(t, resp)), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Logs) == 0 || d.Logs[0].Name != "prompt.md" {
		t.Fatalf("logs %+v; want prompt.md first", d.Logs)
	}
	prompt := d.Logs[0].Head
	// The text is all there, as text; what acts on a display is written
	// visibly.
	if !strings.Contains(prompt, "<script>window.pwned=1</script>") || strings.ContainsAny(prompt, "\x1b\u202e") || !strings.Contains(prompt, `\x1b[2J`) {
		t.Errorf("prompt head %q: want the markup as text and the control characters escaped", prompt)
	}
	var meta map[string]any
	if err := json.Unmarshal(d.Meta, &meta); err != nil {
		t.Fatal(err)
	}
	if s, _ := meta["summary"].(string); strings.ContainsAny(s, "\x1b\u202e") || !strings.Contains(s, "<script>") {
		t.Errorf("meta summary %q: want the control characters escaped", s)
	}
}

func TestFilesAreBounded(t *testing.T) {
	p := repo(t)
	_, ts := server(t, p, "", 0)
	resp := get(t, http.MethodGet, ts.URL+"/api/iterations/3")
	raw := body(t, resp)
	if len(raw) > 200<<10 {
		t.Errorf("the iteration's JSON is %d bytes for a 1.2 MB log", len(raw))
	}
	var d Detail
	if err := json.Unmarshal([]byte(raw), &d); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(filepath.Join(p.RunDir(3), "executor.log"))
	var log *Log
	for i := range d.Logs {
		if d.Logs[i].Name == "executor.log" {
			log = &d.Logs[i]
		}
	}
	switch {
	case log == nil:
		t.Fatal("no executor.log")
	case log.Size != st.Size() || log.Omitted == 0:
		t.Errorf("size %d, omitted %d; want %d and a part omitted", log.Size, log.Omitted, st.Size())
	case int64(len(log.Head))+int64(len(log.Tail))+log.Omitted != st.Size():
		t.Errorf("head %d + tail %d + omitted %d != size %d", len(log.Head), len(log.Tail), log.Omitted, st.Size())
	case !strings.HasSuffix(log.Tail, "the last line\n") || !strings.HasPrefix(log.Head, "a line the agent printed"):
		t.Errorf("head %.40q… tail …%q: want the file's start and end", log.Head, log.Tail[max(0, len(log.Tail)-40):])
	}
	// meta.json is passed through whole: fields this runner does not know
	// reach the page.
	var meta map[string]any
	json.Unmarshal(d.Meta, &meta)
	cp, _ := meta["checkpoint"].(map[string]any)
	if cp["commit"] != "0123456789abcdef0123456789abcdef01234567" || meta["attempt_ref"] != "refs/runner/attempts/3" || meta["review"] == nil {
		t.Errorf("meta %v: want checkpoint, attempt_ref and review passed through", meta)
	}
}

func TestLinksAndPipesAreNotRead(t *testing.T) {
	p := repo(t)
	secret := filepath.Join(t.TempDir(), "secret.txt")
	write(t, secret, "the content of a file outside .runner\n")
	dir := p.RunDir(2)
	os.Remove(filepath.Join(dir, "prompt.md"))
	if err := os.Symlink(secret, filepath.Join(dir, "prompt.md")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "guard.log"))
	if err := syscall.Mkfifo(filepath.Join(dir, "guard.log"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, ts := server(t, p, "", 0)
	resp := get(t, http.MethodGet, ts.URL+"/api/iterations/2") // the client's timeout bounds it: a FIFO must not block
	b := body(t, resp)
	if resp.StatusCode != http.StatusOK || strings.Contains(b, "outside .runner") {
		t.Fatalf("%d: %s", resp.StatusCode, b)
	}
	if strings.Count(b, "cannot be shown") != 2 {
		t.Errorf("want the link and the named pipe each said to be unreadable:\n%s", b)
	}
}

func TestHistory(t *testing.T) {
	p := repo(t)
	// Iteration 4 is under way: started in the journal, no meta.json yet.
	if err := os.MkdirAll(p.RunDir(4), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := state.AppendJournal(p.Journal(), state.Record{Time: time.Now().UTC(), Iteration: 4, Node: "cart", Event: state.EventStarted}); err != nil {
		t.Fatal(err)
	}
	_, ts := server(t, p, "", 0)
	var h History
	if err := json.Unmarshal([]byte(body(t, get(t, http.MethodGet, ts.URL+"/api/iterations"))), &h); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range h.Iterations {
		got = append(got, strings.Join([]string{it.Node, it.Outcome, it.Source, map[bool]string{true: "in flight"}[it.InFlight]}, " "))
	}
	want := []string{"cart  journal in flight", "pay blocked meta ", "cart guard_failed meta ", "catalog done journal "}
	if h.Latest != 4 || strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("latest %d, history %q; want 4, %q", h.Latest, got, want)
	}
	if it := h.Iterations[3]; it.DurationMS != 90_000 || it.Summary != "catalog done" {
		t.Errorf("the pruned iteration from the journal: %+v", it)
	}
	if it := h.Iterations[2]; it.Usage == nil || it.Usage.CostUSD != 0.05 || it.DurationMS != 60_000 {
		t.Errorf("iteration 2 from meta.json: %+v", it)
	}
	if it := h.Iterations[1]; it.Executor != "claude" || it.Rung == nil || *it.Rung != (state.RungMeta{N: 2, Of: 2, Executor: "claude"}) {
		t.Errorf("iteration 3's executor %q, rung %+v; want claude, rung 2 of 2", it.Executor, it.Rung)
	}

	if err := json.Unmarshal([]byte(body(t, get(t, http.MethodGet, ts.URL+"/api/iterations?before=4&limit=2"))), &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Iterations) != 2 || h.Iterations[0].Iteration != 3 || h.Iterations[1].Iteration != 2 || !h.More {
		t.Errorf("before=4&limit=2: %+v; want 3 and 2, and more", h)
	}
	for path, want := range map[string]int{
		"/api/iterations/99": http.StatusNotFound, "/api/iterations/0": http.StatusBadRequest, "/api/iterations/x": http.StatusBadRequest,
		"/api/iterations?limit=0": http.StatusBadRequest, "/api/iterations/4": http.StatusOK, "/api/iterations/1": http.StatusOK,
		"/assets/..%2fserve.go": http.StatusNotFound, "/assets/nope.js": http.StatusNotFound, "/nope": http.StatusNotFound,
	} {
		resp := get(t, http.MethodGet, ts.URL+path)
		if body(t, resp); resp.StatusCode != want {
			t.Errorf("GET %s: %d; want %d", path, resp.StatusCode, want)
		}
	}
}

func TestJournalRecordsOfOneIteration(t *testing.T) {
	p := repo(t)
	for _, n := range []int{10, 11, 100, 1} {
		if err := state.AppendJournal(p.Journal(), state.Record{Iteration: n, Node: "cart", Event: state.EventStarted, Summary: `"iteration":1`}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, r := range journalRecords(p, 1) {
		got = append(got, fmt.Sprintf("%d %s", r.Iteration, r.Event))
	}
	if want := "1 started|1 recorded|1 started"; strings.Join(got, "|") != want {
		t.Errorf("records of iteration 1: %q; want %q", got, want)
	}
}

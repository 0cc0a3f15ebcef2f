package serve

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/state"
)

// snapshot is every file and folder under dir with its mode, time and
// size.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err == nil {
			b.WriteString(path + " " + info.Mode().String() + " " + info.ModTime().String())
			if !info.IsDir() {
				b.WriteString(" " + strconv.FormatInt(info.Size(), 10))
			}
			b.WriteString("\n")
		}
		return nil
	})
	return b.String()
}

func TestReadsOnlyAndTakesNoLock(t *testing.T) {
	p := repo(t)
	lock, err := state.AcquireLock(p) // a runner is working
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	before := snapshot(t, p.Dir)
	_, ts := server(t, p, "", 50*time.Millisecond)
	for _, path := range []string{"/", "/api/status", "/api/iterations", "/api/iterations/2", "/api/iterations/3", "/api/notes"} {
		resp := get(t, http.MethodGet, ts.URL+path)
		if body(t, resp); resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s beside a running runner: %d", path, resp.StatusCode)
		}
	}
	events := stream(t, ts.URL+"/events")
	if ev := next(t, events); ev["progress"] == nil {
		t.Errorf("first event %v: want the status", ev)
	}
	if after := snapshot(t, p.Dir); after != before {
		t.Errorf(".runner/ changed:\nbefore\n%s\nafter\n%s", before, after)
	}
}

// stream opens the event stream at url and delivers the data of its
// status events.
func stream(t *testing.T, url string, header ...string) <-chan string {
	t.Helper()
	resp := get(t, http.MethodGet, url, header...)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	t.Cleanup(func() { resp.Body.Close() })
	events := make(chan string, 16)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			if e, ok := strings.CutPrefix(line, "event: "); ok {
				event = e
			} else if data, ok := strings.CutPrefix(line, "data: "); ok && event == "status" {
				events <- data
			}
		}
	}()
	return events
}

// next is the next event's data, decoded; it fails the test when none
// comes within the deadline.
func next(t *testing.T, events <-chan string) map[string]any {
	t.Helper()
	select {
	case data, ok := <-events:
		if !ok {
			t.Fatal("the event stream ended")
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(data), &v); err != nil {
			t.Fatalf("event data %q: %v", data, err)
		}
		return v
	case <-time.After(deadline):
		t.Fatalf("no event within %s", deadline)
	}
	return nil
}

func TestEventsOnChange(t *testing.T) {
	p := repo(t)
	// An hour between rechecks: only the change notification can bring
	// the event in time.
	_, ts := server(t, p, "tok", time.Hour)
	events := stream(t, ts.URL+"/events", "Authorization", "Bearer tok")
	if first := next(t, events); first["progress"] == nil {
		t.Fatalf("first event %v: want the status at once", first)
	}
	replace(t, p.Tree(), strings.Replace(fixtureTree, `"title": "Cart"`, `"title": "Cart, renamed while watched"`, 1))
	if ev := next(t, events); !strings.Contains(mustJSON(ev), "Cart, renamed while watched") {
		t.Fatalf("event after the edit %v: want the new title", ev)
	}
	// A phase change the status does not show (a guard result in the
	// journal) is an event too.
	if err := state.AppendJournal(p.Journal(), state.Record{Iteration: 3, Node: "pay", Event: state.EventGuardsDone}); err != nil {
		t.Fatal(err)
	}
	next(t, events)
	// So is a tree that does not load, with the error.
	replace(t, p.Tree(), `{"version": 1, "root": {`)
	if ev := next(t, events); ev["error"] == nil {
		t.Fatalf("event after a broken edit %v: want an error", ev)
	}
}

func mustJSON(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

package loop

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/state"
)

// hook is a webhook that records the JSON bodies it is sent.
type hook struct {
	mu     sync.Mutex
	bodies []map[string]any
	srv    *httptest.Server
}

func newHook(t *testing.T) *hook {
	h := &hook{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var v map[string]any
		if err := json.Unmarshal(data, &v); err != nil {
			t.Errorf("a body that is not JSON: %q", data)
		}
		h.mu.Lock()
		h.bodies = append(h.bodies, v)
		h.mu.Unlock()
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// events are the events received, in order.
func (h *hook) events() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, b := range h.bodies {
		out = append(out, b["event"].(string))
	}
	return out
}

// text is the text of the first notification of event, or "".
func (h *hook) text(event string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, b := range h.bodies {
		if b["event"] == event {
			return b["text"].(string)
		}
	}
	return ""
}

func notifyConf(urls ...string) string {
	var b strings.Builder
	for _, u := range urls {
		b.WriteString("\n[[notify]]\nurl = \"" + u + "\"\n")
	}
	return b.String()
}

func TestNotifiesBlockedAndStuck(t *testing.T) {
	token := "ghp_" + strings.Repeat("aB3dE5gH7j", 3) + "kL9mNp"
	all, blockedOnly := newHook(t), newHook(t)
	conf := notifyConf(all.srv.URL+"/all") + "\n[[notify]]\nurl = \"" + blockedOnly.srv.URL + "/blocked\"\nevents = [\"blocked\"]\n"
	p := agentRepo(t, countingAgent(`1) `+doneMessage+`;;
*) echo '{"status":"blocked","summary":"Which database, Postgres or SQLite?","questions":["May I push with `+token+`?"]}' > "$OUT";;`), conf)
	res, err := runBounded(t, context.Background(), p, &syncBuffer{})
	if err != nil || res.Reason != Stuck {
		t.Fatalf("run: %v %+v; want stuck", err, res)
	}
	// Close waited for the deliveries: they are all in.
	if got := strings.Join(all.events(), ","); got != "blocked,stuck" {
		t.Errorf("the target for every event got %s; want blocked,stuck", got)
	}
	if got := strings.Join(blockedOnly.events(), ","); got != "blocked" {
		t.Errorf("the target for blocked got %s; want blocked", got)
	}
	repo := p.Root[strings.LastIndexByte(p.Root, '/')+1:]
	text := all.text("blocked")
	for _, want := range []string{repo + ": task app/b asks (iteration 2): Which database, Postgres or SQLite?",
		"\n- May I push with [REDACTED:", "`runner answer b \"your answer\"`", "`runner skip b`"} {
		if !strings.Contains(text, want) {
			t.Errorf("the blocked notification does not say %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, token) {
		t.Errorf("the blocked notification carries the agent's secret:\n%s", text)
	}
	if s := all.text("stuck"); !strings.Contains(s, repo+": stuck: blocked: app/b (May I push with [REDACTED:") ||
		!strings.Contains(s, "answer it with `runner answer b \"your answer\"`") || !strings.Contains(s, "runner report") {
		t.Errorf("the stuck notification: %s", s)
	}
}

func TestNotifiesCompleteAndLimit(t *testing.T) {
	h := newHook(t)
	p := agentRepo(t, countingAgent(`*) `+doneMessage+`;;`), notifyConf(h.srv.URL))
	res, err := Run(context.Background(), Options{Paths: p, MaxIterations: 2})
	if err != nil || res.Reason != MaxIterations {
		t.Fatalf("run: %v %+v; want max iterations", err, res)
	}
	res, err = runBounded(t, context.Background(), p, &syncBuffer{})
	if err != nil || res.Reason != Complete {
		t.Fatalf("run: %v %+v; want complete", err, res)
	}
	if got := strings.Join(h.events(), ","); got != "limit,complete" {
		t.Errorf("events %s; want limit,complete", got)
	}
	if s := h.text("limit"); !strings.Contains(s, "reached max_iterations (2)") {
		t.Errorf("the limit notification: %s", s)
	}
	if s := h.text("complete"); !strings.Contains(s, "tree complete: 3 of 3 tasks done") {
		t.Errorf("the complete notification: %s", s)
	}
}

func TestNotifiesRateLimitWaitAndError(t *testing.T) {
	h := newHook(t)
	p := agentRepo(t, countingAgent(`1|2) echo "ERROR: 429 Too Many Requests" >&2; exit 1;;
*) echo "no final message"; exit 2;;`), fastBackoff+"max_consecutive_errors = 1\n"+notifyConf(h.srv.URL))
	_, err := runBounded(t, context.Background(), p, &syncBuffer{})
	if err == nil || !strings.Contains(err.Error(), "failed 1 times in a row") {
		t.Fatalf("run error %v; want the consecutive errors cap", err)
	}
	// One notification when the waits begin, not one per retry.
	if got := strings.Join(h.events(), ","); got != "limit,error" {
		t.Errorf("events %s; want limit,error", got)
	}
	if s := h.text("limit"); !strings.Contains(s, "hit a usage or rate limit on task app/a (iteration 1); the run waits until") ||
		!strings.Contains(s, "429 Too Many Requests") {
		t.Errorf("the limit notification: %s", s)
	}
	if s := h.text("error"); !strings.Contains(s, "the run stopped on an error (exit 1): stopping: the agent failed 1 times in a row") {
		t.Errorf("the error notification: %s", s)
	}
}

func TestHangingWebhookDoesNotHoldTheRun(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	old := notifyCloseWait
	notifyCloseWait = 300 * time.Millisecond
	t.Cleanup(func() { notifyCloseWait = old })
	p := agentRepo(t, countingAgent(`*) echo '{"status":"blocked","summary":"why?"}' > "$OUT";;`), "on_blocked = \"continue\"\n"+notifyConf(srv.URL))
	start := time.Now()
	res, err := runBounded(t, context.Background(), p, &syncBuffer{})
	if err != nil || res.Reason != Stuck {
		t.Fatalf("run: %v %+v; want stuck", err, res)
	}
	// Three blocked tasks and the stuck run, each queued for a server that
	// never answers: the run is not held up by them, and its end waits
	// for them no longer than notifyCloseWait.
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the run took %s with a webhook that does not answer", took)
	}
	if got := len(events(t, p, state.EventRecorded)); got != 3 {
		t.Errorf("%d iterations recorded; want 3", got)
	}
}

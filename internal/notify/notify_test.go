package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/runner-cli/runner/internal/scrub"
)

// deadline bounds every wait of these tests.
const deadline = 10 * time.Second

// fast is a timing for tests: retries without real waits.
var fast = timing{timeout: 5 * time.Second, retries: 3, backoff: 20 * time.Millisecond, maxBackoff: 100 * time.Millisecond, queue: 8}

// received is one request a test server got.
type received struct {
	Method, Path, ContentType string
	Body                      []byte
	At                        time.Time
}

// recorder is a webhook that answers with the given statuses in turn
// (200 once they run out) and records what it is sent.
type recorder struct {
	mu       sync.Mutex
	got      []received
	statuses []int
	srv      *httptest.Server
}

func newRecorder(t *testing.T, statuses ...int) *recorder {
	r := &recorder{statuses: statuses}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{req.Method, req.URL.RequestURI(), req.Header.Get("Content-Type"), body, time.Now()})
		status := http.StatusOK
		if len(r.statuses) > 0 {
			status, r.statuses = r.statuses[0], r.statuses[1:]
		}
		r.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *recorder) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// logs records warnings.
type logs struct {
	mu    sync.Mutex
	lines []string
}

func (l *logs) Warn(msg any, kv ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprint(append([]any{msg}, kv...)...))
}

func (l *logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func start(t *testing.T, targets []Target, s *scrub.Scrubber, tm timing) (*Notifier, *logs) {
	t.Helper()
	l := &logs{}
	n, err := newNotifier(targets, s, l, tm)
	if err != nil {
		t.Fatal(err)
	}
	return n, l
}

func closeWithin(t *testing.T, n *Notifier, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	done := make(chan struct{})
	go func() { n.Close(ctx); close(done) }()
	select {
	case <-done:
	case <-time.After(d + deadline):
		t.Fatalf("Close did not return within %s of its deadline", deadline)
	}
}

func decode(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("body %q: %v", data, err)
	}
	return v
}

func TestBodyOfEachService(t *testing.T) {
	text := "calc/ops: Which database: <!channel> Postgres or SQLite? @everyone"
	tests := []struct {
		format string
		path   string // the target URL's path
		want   map[string]any
		to     string // where the POST goes
	}{
		{FormatSlack, "/services/T0/B0/x", map[string]any{
			"text": "*runner: a task is blocked and waits for you*\ncalc/ops: Which database: &lt;!channel&gt; Postgres or SQLite? @everyone"},
			"/services/T0/B0/x"},
		{FormatDiscord, "/api/webhooks/1/tok", map[string]any{
			"content":          "**runner: a task is blocked and waits for you**\n" + text,
			"allowed_mentions": map[string]any{"parse": []any{}}},
			"/api/webhooks/1/tok"},
		{FormatNtfy, "/runner-alerts", map[string]any{
			"topic": "runner-alerts", "title": "runner: a task is blocked and waits for you", "message": text,
			"tags": []any{"question"}, "priority": float64(4)},
			"/"},
		{FormatJSON, "/hook", map[string]any{
			"text": "runner: a task is blocked and waits for you\n" + text, "title": "runner: a task is blocked and waits for you",
			"message": text, "event": "blocked"},
			"/hook"},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			r := newRecorder(t)
			n, l := start(t, []Target{{URL: r.srv.URL + tt.path, Format: tt.format}}, nil, fast)
			n.Send(Blocked, text)
			closeWithin(t, n, deadline)
			got := r.requests()
			if len(got) != 1 {
				t.Fatalf("the service got %d requests; want 1 (log: %s)", len(got), l)
			}
			if got[0].Method != http.MethodPost || got[0].Path != tt.to || got[0].ContentType != "application/json" {
				t.Errorf("request %s %s (%s); want POST %s (application/json)", got[0].Method, got[0].Path, got[0].ContentType, tt.to)
			}
			body := decode(t, got[0].Body)
			if tt.format == FormatJSON {
				if _, err := time.Parse(time.RFC3339, fmt.Sprint(body["time"])); err != nil {
					t.Errorf("time %v: %v", body["time"], err)
				}
				delete(body, "time")
			}
			if !reflect.DeepEqual(body, tt.want) {
				t.Errorf("body\n %v\nwant\n %v", body, tt.want)
			}
		})
	}
}

func TestFormatFromTheURL(t *testing.T) {
	for url, want := range map[string]string{
		"https://hooks.slack.com/services/T0/B0/xyz":           FormatSlack,
		"https://discord.com/api/webhooks/123/abc":             FormatDiscord,
		"https://discordapp.com/api/webhooks/123/abc":          FormatDiscord,
		"https://discord.com/channels/1/2":                     FormatJSON,
		"https://ntfy.sh/my-runner":                            FormatNtfy,
		"https://ntfy.example.com/my-runner":                   FormatJSON, // a server of one's own: format = "ntfy"
		"https://chat.example.com/hooks/abc":                   FormatJSON,
		"http://127.0.0.1:9999/whatever?token=secret-in-query": FormatJSON,
	} {
		if got := (Target{URL: url}).format(); got != want {
			t.Errorf("format of %s = %s; want %s", url, got, want)
		}
	}
	if got := (Target{URL: "https://hooks.slack.com/services/x", Format: FormatJSON}).format(); got != FormatJSON {
		t.Errorf("an explicit format is not taken: %s", got)
	}
}

func TestNtfyRootKeepsPrefixAndQuery(t *testing.T) {
	r := newRecorder(t)
	n, _ := start(t, []Target{{URL: r.srv.URL + "/push/alerts?auth=tk", Format: FormatNtfy}}, nil, fast)
	n.Send(Complete, "all done")
	closeWithin(t, n, deadline)
	got := r.requests()
	if len(got) != 1 || got[0].Path != "/push/?auth=tk" || decode(t, got[0].Body)["topic"] != "alerts" {
		t.Fatalf("requests %+v; want one POST to /push/?auth=tk for the topic alerts", got)
	}
}

func TestEventFilter(t *testing.T) {
	onlyBlocked, all := newRecorder(t), newRecorder(t)
	n, _ := start(t, []Target{
		{URL: onlyBlocked.srv.URL, Events: []string{"blocked", "tamper"}},
		{URL: all.srv.URL},
	}, nil, fast)
	n.Send(Complete, "done")
	n.Send(Blocked, "a question")
	n.Send(Limit, "out of budget")
	closeWithin(t, n, deadline)
	if got := onlyBlocked.requests(); len(got) != 1 || decode(t, got[0].Body)["event"] != "blocked" {
		t.Errorf("the target for blocked and tamper got %d requests (%v); want the blocked one", len(got), got)
	}
	var events []any
	for _, r := range all.requests() {
		events = append(events, decode(t, r.Body)["event"])
	}
	if !reflect.DeepEqual(events, []any{"complete", "blocked", "limit"}) {
		t.Errorf("the target for every event got %v; want complete, blocked, limit in order", events)
	}
}

func TestRetriesWithBackoff(t *testing.T) {
	r := newRecorder(t, 500, 503, 200)
	n, l := start(t, []Target{{URL: r.srv.URL}}, nil, fast)
	n.Send(Error, "the guard binary is missing")
	closeWithin(t, n, deadline)
	got := r.requests()
	if len(got) != 3 {
		t.Fatalf("%d requests; want 3 (two failures, then success)", len(got))
	}
	// Each wait is at least the backoff, doubled after each retry.
	if gap := got[1].At.Sub(got[0].At); gap < fast.backoff {
		t.Errorf("first retry after %s; want at least %s", gap, fast.backoff)
	}
	if gap := got[2].At.Sub(got[1].At); gap < 2*fast.backoff {
		t.Errorf("second retry after %s; want at least %s", gap, 2*fast.backoff)
	}
	if l.String() != "" {
		t.Errorf("a notification delivered in the end logged: %s", l)
	}
}

func TestGivesUpWithAWarning(t *testing.T) {
	t.Run("a server error every time", func(t *testing.T) {
		r := newRecorder(t, 500, 500, 500, 500, 500, 500)
		n, l := start(t, []Target{{URL: r.srv.URL + "/secret-path"}}, nil, fast)
		n.Send(Stuck, "nothing selectable")
		closeWithin(t, n, deadline)
		if got := len(r.requests()); got != 1+fast.retries {
			t.Errorf("%d requests; want %d", got, 1+fast.retries)
		}
		if !strings.Contains(l.String(), "not delivered after 4 tries") || strings.Contains(l.String(), "secret-path") {
			t.Errorf("log %q: want a warning after 4 tries that does not show the URL's path", l)
		}
	})
	t.Run("a refusal is not retried", func(t *testing.T) {
		r := newRecorder(t, 404)
		n, l := start(t, []Target{{URL: r.srv.URL}}, nil, fast)
		n.Send(Stuck, "nothing selectable")
		closeWithin(t, n, deadline)
		if got := len(r.requests()); got != 1 || !strings.Contains(l.String(), "404") {
			t.Errorf("%d requests, log %q; want 1 and a warning naming the 404", got, l)
		}
	})
	t.Run("nobody listening", func(t *testing.T) {
		r := newRecorder(t)
		url := r.srv.URL
		r.srv.Close()
		n, l := start(t, []Target{{URL: url}}, nil, fast)
		n.Send(Stuck, "nothing selectable")
		closeWithin(t, n, deadline)
		if !strings.Contains(l.String(), "not delivered after 4 tries") {
			t.Errorf("log %q: want a warning after 4 tries", l)
		}
	})
}

func TestHangingServerDoesNotBlock(t *testing.T) {
	release := make(chan struct{})
	var started sync.Once
	arrived := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started.Do(func() { close(arrived) })
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	tm := fast
	tm.timeout = time.Hour // only Close's deadline ends the request
	n, l := start(t, []Target{{URL: srv.URL}}, nil, tm)
	sent := make(chan struct{})
	go func() {
		for i := 0; i < 10*tm.queue; i++ {
			n.Send(Blocked, fmt.Sprintf("question %d", i))
		}
		close(sent)
	}()
	select {
	case <-sent:
	case <-time.After(deadline):
		t.Fatal("Send blocked on a server that does not answer")
	}
	select {
	case <-arrived:
	case <-time.After(deadline):
		t.Fatal("the first notification never reached the server")
	}
	closeWithin(t, n, 50*time.Millisecond)
	if !strings.Contains(l.String(), "too many are waiting") || !strings.Contains(l.String(), "the run ended before it was sent") {
		t.Errorf("log %q: want warnings for the dropped notifications", l)
	}
	n.Send(Blocked, "after Close") // does nothing, and does not panic
}

func TestTextIsScrubbedEscapedAndBounded(t *testing.T) {
	s, err := scrub.New(scrub.Options{Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	token := "ghp_" + strings.Repeat("aB3dE5gH7j", 3) + "kL9mNp"
	r := newRecorder(t)
	n, _ := start(t, []Target{{URL: r.srv.URL + "/topic", Format: FormatNtfy}, {URL: r.srv.URL + "/d", Format: FormatDiscord}}, s, fast)
	n.Send(Blocked, "the agent asks: may I push with "+token+"?\x1b[2J\n"+strings.Repeat("é", 5000))
	closeWithin(t, n, deadline)
	got := r.requests()
	if len(got) != 2 {
		t.Fatalf("%d requests; want 2", len(got))
	}
	for _, req := range got {
		body := string(req.Body)
		if strings.Contains(body, token) || !strings.Contains(body, "[REDACTED:") {
			t.Errorf("body %.200q: the token is not redacted", body)
		}
		if strings.Contains(body, "\x1b") || strings.Contains(body, `\u001b`) || !strings.Contains(body, `\\x1b[2J`) {
			t.Errorf("body %.200q: want the escape character written visibly", body)
		}
		v := decode(t, req.Body)
		msg, _ := v["message"].(string)
		if c, ok := v["content"].(string); ok {
			if utf8.RuneCountInString(c) > 2000 {
				t.Errorf("Discord content of %d characters; Discord takes 2000", utf8.RuneCountInString(c))
			}
			continue
		}
		if len(msg) > maxText || !strings.HasSuffix(msg, "…") {
			t.Errorf("message of %d bytes (ending %q); want at most %d, cut with an ellipsis", len(msg), msg[max(0, len(msg)-8):], maxText)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tt := range []struct {
		target Target
		want   string // in the error; "" for none
	}{
		{Target{URL: "https://hooks.slack.com/services/T/B/secret"}, ""},
		{Target{URL: "https://ntfy.sh/alerts", Events: []string{"blocked", "stuck"}}, ""},
		{Target{URL: "hooks.slack.com/services/T/B/secret"}, "want an http:// or https:// URL"},
		{Target{URL: "ftp://example.com/x"}, "want an http:// or https:// URL"},
		{Target{URL: "https://example.com/x/secret", Events: []string{"blokced"}}, `https://example.com/…: unknown event "blokced" (did you mean "blocked"?); the events are blocked, stuck`},
		{Target{URL: "https://example.com/x", Format: "teams"}, `unknown format "teams"`},
		{Target{URL: "https://ntfy.sh/"}, "an ntfy URL ends with its topic"},
	} {
		err := tt.target.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%+v: %v", tt.target, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%+v: error %v; want one saying %q", tt.target, err, tt.want)
		case err != nil && strings.Contains(err.Error(), "secret"):
			t.Errorf("%+v: the error shows the URL's secret: %v", tt.target, err)
		}
	}
	if _, err := New([]Target{{URL: "nope"}}, nil, nil); err == nil {
		t.Error("New took an invalid target")
	}
}

func TestNoTargets(t *testing.T) {
	n, err := New(nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	n.Send(Blocked, "nobody hears this")
	n.Close(context.Background())
	var none *Notifier
	none.Send(Blocked, "nor this")
	none.Close(context.Background())
}

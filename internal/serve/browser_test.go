package serve_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/runner-cli/runner/internal/state"
)

var keepShots = flag.String("screenshots", "", "also copy the browser test's screenshots of the dashboard into this folder (docs/)")

// chromium finds a Chromium or Chrome to drive: $RUNNER_CHROMIUM, or one
// on PATH under the usual names.
func chromium() string {
	if p := os.Getenv("RUNNER_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestDashboardInBrowser runs a scratch run to where it stops, serves its
// dashboard with `runner serve --token`, and loads the page in headless
// Chromium, the token given once in its URL:
// the tasks, the blocked question and the history appear in the rendered
// page, markup in the question stays text, an iteration opens with its
// logs, a change to the state while the page is open appears without a
// reload, and three slots at work show in "Now" with the question still
// in "Needs you". The screenshots go to the test's temporary folder (and with
// -screenshots DIR to DIR).
func TestDashboardInBrowser(t *testing.T) {
	browser := chromium()
	if browser == "" {
		t.Skip("no headless Chromium: install the Debian package chromium (bash .ci/run does where apt-get works) or set RUNNER_CHROMIUM; the dashboard's browser test is skipped")
	}
	root, bin := scratchRun(t)
	// With a token, as from a phone: the page takes it once from its URL.
	const token = "a-token-for-the-browser-test"
	url := startServe(t, bin, root, "--token", token)
	shots := t.TempDir()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// The flags keep Chromium from reaching for the network, which is
	// closed here: without them it stalls on refused connections.
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(browser),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-features", "Translate,MediaRouter,OptimizationHints"),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1360, 1000),
	)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()

	// Every console error (a refusal by the Content-Security-Policy among
	// them) and exception fails the test.
	var mu sync.Mutex
	var problems []string
	if err := chromedp.Do(bctx); err != nil { // starts the browser
		t.Fatalf("start %s: %v", browser, err)
	}
	go func() {
		for m, err := range chromedp.Console(bctx) {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == "error" {
				mu.Lock()
				problems = append(problems, m.String())
				mu.Unlock()
			}
		}
	}()

	step := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		// Each step waits for what it needs up to a minute: on a busy
		// machine the browser is slow to draw, never this slow.
		sctx, cancel := context.WithTimeout(bctx, time.Minute)
		defer cancel()
		if err := chromedp.Do(sctx, actions...); err != nil {
			shot(t, bctx, filepath.Join(shots, "failed.png"))
			t.Fatalf("%s: %v (the page is in %s)", what, err, filepath.Join(shots, "failed.png"))
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector(`+quote(sel)+`).textContent`))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}

	step("load the page and see the tree",
		chromedp.Navigate(url+"?token="+token),
		chromedp.WaitVisible(chromedp.CSS(`#tree li[data-id="emails"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#history-body tr[data-n="4"]`)))
	// The token left the address, and the session cookie is out of the
	// script's reach.
	if ok, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`location.search === '' && document.cookie === ''`)); err != nil || !ok {
		t.Errorf("the token is still in the address, or the cookie is readable by the page (%v)", err)
	}
	tree := text("#tree")
	for _, title := range []string{"Web shop", "Catalog page", "Shopping cart", "Payments", "Order emails"} {
		if !strings.Contains(tree, title) {
			t.Errorf("the tree %q lacks %q", tree, title)
		}
	}
	if p := text("#progress-text"); p != "2 of 4 tasks done, 1 blocked" {
		t.Errorf("progress %q", p)
	}
	// The guards' tests for the run, and the tests of the catalog's check,
	// against what they were before the work.
	if p := text("#tests-text"); p != "tests: 1 of 1 passing (baseline 1)" {
		t.Errorf("tests %q", p)
	}
	if p := text(`#tree li[data-id="catalog"] .tests`); p != "tests: 2 of 2 passing (baseline 1)" {
		t.Errorf("the catalog's tests %q", p)
	}
	// The blocked question is shown, its markup as text: no script ran and
	// no element was made from it.
	if q := text("#blocked-body"); !strings.Contains(q, question) || !strings.Contains(q, "<script>window.pwned=1</script>") || !strings.Contains(q, `runner answer payments "your answer"`) {
		t.Errorf("the blocked panel %q: want the question, its markup as text, and the command", q)
	}
	if ok, err := chromedp.Run(bctx, chromedp.Evaluate[bool](
		`!window.pwned && [...document.scripts].every(s => s.src.startsWith(location.origin + '/assets/'))`)); err != nil || !ok {
		t.Errorf("a script other than the page's own is in the page, or ran (%v)", err)
	}
	if rows := text("#history-body"); !strings.Contains(rows, "guards failed") || !strings.Contains(rows, "blocked") || !strings.Contains(rows, "rung 1 of 1 (claude)") {
		t.Errorf("history %q: want a guard failure, the blocked iteration and each attempt's rung", rows)
	}
	if u := text("#usage-text"); !strings.Contains(u, "caps: the run 100.00M tokens (") {
		t.Errorf("usage %q: want the run's cap and what was spent", u)
	}

	// The history may be drawn again by a live update just as the row is
	// clicked (on a busy machine the first update comes late), which
	// loses the click: the row is clicked until its detail shows.
	step("open the iteration whose guard failed",
		chromedp.Evaluate[chromedp.Void](`new Promise(done => {
			const open = () => {
				if (document.querySelector('#detail-body details.log[data-name="guard.log"]')) return done();
				document.querySelector('#history-body tr[data-n="2"]')?.click();
				setTimeout(open, 250);
			};
			open();
		})`, chromedp.EvalAwaitPromise),
		chromedp.WaitVisible(chromedp.CSS(`#detail-body details.log[data-name="guard.log"]`)),
		chromedp.Click(chromedp.CSS(`#detail-body details.log[data-name="guard.log"] summary`)))
	if d := text("#detail-body"); !strings.Contains(d, "cart.txt must say ok") || !strings.Contains(d, "prompt.md") {
		t.Errorf("iteration 2 %q: want the guard's output and the prompt", d)
	}
	if d := text("#detail-body"); !strings.Contains(d, "ladderrung 1 of 1 (claude)") {
		t.Errorf("iteration 2 %q: want its rung", d)
	}
	step("scroll to the top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	shot(t, bctx, filepath.Join(shots, "dashboard.png"))

	// A live update: a task added to tree.json while the page is open
	// appears without a reload (the marker set on the page survives).
	step("mark the page", chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`))
	addTask(t, filepath.Join(root, ".runner", "tree.json"), "refunds", "Refunds, added while the page was open")
	step("see the new task", chromedp.WaitVisible(chromedp.CSS(`#tree li[data-id="refunds"]`)))
	if ok, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`window.notReloaded === true`)); err != nil || !ok {
		t.Errorf("the page reloaded to show the change (%v)", err)
	}
	if p := text("#progress-text"); p != "2 of 5 tasks done, 1 blocked" {
		t.Errorf("progress after the edit %q", p)
	}

	// `runner pause` shows at once, and so does `runner resume`.
	pause := filepath.Join(root, ".runner", "state", "pause")
	if err := os.WriteFile(pause, []byte("paused by a test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	step("see the pause", chromedp.WaitVisible(chromedp.CSS(`#now-body .pill.paused`)))
	if now := text("#now-body"); !strings.Contains(now, "runner resume") {
		t.Errorf("the paused panel %q does not say how to go on", now)
	}
	if err := os.Remove(pause); err != nil {
		t.Fatal(err)
	}
	step("see the resume", chromedp.WaitNotPresent(chromedp.CSS(`#now-body .pill.paused`)))

	// Three slots at work (a runner holds the lock; the journal has their
	// started records): "Now" shows each, with its agent's latest event,
	// and the tree marks each task running.
	p := state.NewPaths(root)
	lock, err := state.AcquireLock(p)
	if err != nil {
		t.Fatal(err)
	}
	for i, node := range []string{"cart", "refunds", "emails"} {
		n := 20 + i
		if err := state.AppendJournal(p.Journal(), state.Record{Time: time.Now().UTC(), Iteration: n, Node: node, Event: state.EventStarted, Slot: i + 1, RunnerPID: os.Getpid()}); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(p.RunDir(n), "events.jsonl"), `{"type":"item.started","item":{"type":"command_execution","command":"npm test -- `+node+`"}}`+"\n")
	}
	step("see three slots at work", chromedp.Evaluate[chromedp.Void](`new Promise(done => {
		const look = () => document.querySelectorAll('#now-body .pill.running').length === 3 ? done() : setTimeout(look, 100);
		look();
	})`, chromedp.EvalAwaitPromise))
	now := text("#now-body")
	for _, want := range []string{"slot 1 · iteration 20", "slot 2 · iteration 21", "slot 3 · iteration 22", "running npm test -- refunds"} {
		if !strings.Contains(now, want) {
			t.Errorf("Now %q does not show %q", now, want)
		}
	}
	if marked, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll('#tree .mark.running').length`)); err != nil || marked != 3 {
		t.Errorf("the tree marks %d tasks running, want 3 (%v)", marked, err)
	}
	// And the question waits meanwhile: the "Needs you" card still shows
	// it, with the command that answers it, beside the three slots.
	if shown, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`!document.getElementById('blocked').hidden`)); err != nil || !shown {
		t.Errorf("the \"Needs you\" card is hidden while three slots work (%v)", err)
	}
	if q := text("#blocked-body"); !strings.Contains(q, question) || !strings.Contains(q, `runner answer payments "your answer"`) {
		t.Errorf("with three slots at work the \"Needs you\" card %q: want the question and the command", q)
	}
	step("scroll to the top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	shot(t, bctx, filepath.Join(shots, "dashboard-slots.png"))
	lock.Release()

	// On a phone the page fits the screen's width.
	step("a phone's screen", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile))
	for _, sel := range []string{"html", ".table-wrap"} {
		if over, err := chromedp.Run(bctx, chromedp.Evaluate[int](`(e => e.scrollWidth - e.clientWidth)(document.querySelector(`+quote(sel)+`))`)); err != nil || over > 0 {
			t.Errorf("on a 390px screen %s is %dpx too wide (%v)", sel, over, err)
		}
	}
	step("scroll to the top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	phone, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
	if err == nil {
		err = os.WriteFile(filepath.Join(shots, "dashboard-phone.png"), phone, 0o644)
	}
	if err != nil {
		t.Errorf("screenshot of the phone's screen: %v", err)
	}

	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("browser console: %s", p)
	}
	t.Logf("screenshots in %s", shots)
	if *keepShots != "" {
		for _, name := range []string{"dashboard.png", "dashboard-phone.png"} {
			data, err := os.ReadFile(filepath.Join(shots, name))
			if err == nil {
				err = os.WriteFile(filepath.Join(*keepShots, name), data, 0o644)
			}
			if err != nil {
				t.Error(err)
			}
		}
	}
}

// shot saves a screenshot of the whole page.
func shot(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(sctx, chromedp.FullScreenshot(100))
	if err == nil {
		err = os.WriteFile(path, png, 0o644)
	}
	if err != nil {
		t.Errorf("screenshot %s: %v", path, err)
	}
}

// addTask adds a task to the root of tree.json as a person's editor
// would: a new file renamed over the old one.
func addTask(t *testing.T, path, id, title string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	r := doc["root"].(map[string]any)
	r["children"] = append(r["children"].([]any), map[string]any{"id": id, "title": title})
	data, _ = json.MarshalIndent(doc, "", "  ")
	tmp := path + ".edit"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func quote(s string) string {
	data, _ := json.Marshal(s)
	return string(data)
}

package guard

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/sandbox"
)

type runOut struct {
	results []Result
	verdict string
	err     error
}

func runBounded(t *testing.T, ctx context.Context, root string, guards []Spec) (runOut, string, string) {
	t.Helper()
	dir := t.TempDir()
	guardLog, failureLog := filepath.Join(dir, "guard.log"), filepath.Join(dir, "failure.log")
	// Stale files from an earlier attempt must not survive.
	os.WriteFile(guardLog, []byte("STALE GUARD LOG\n"), 0o644)
	os.WriteFile(failureLog, []byte("STALE FAILURE LOG\n"), 0o644)
	done := make(chan runOut, 1)
	go func() {
		r, v, err := Run(ctx, root, guards, guardLog, failureLog, 500*time.Millisecond, nil)
		done <- runOut{r, v, err}
	}()
	select {
	case out := <-done:
		return out, guardLog, failureLog
	case <-time.After(2 * time.Minute):
		t.Fatal("guard.Run did not return within 2 minutes")
		return runOut{}, "", ""
	}
}

func readOrEmpty(path string) (string, bool) {
	data, err := os.ReadFile(path)
	return string(data), err == nil
}

func TestRunPassFailTimeout(t *testing.T) {
	root := t.TempDir()
	guards := []Spec{
		{Name: "build", Run: "echo building; pwd"},
		{Name: "test", Run: "echo 'FAIL: TestX' >&2; exit 3"},
		{Name: "slow", Run: "sleep 60 & echo $! > gc.pid; echo waiting; wait", Timeout: config.Duration{Duration: 2 * time.Second}},
		{Name: "lint", Run: "printf 'no newline at the end'"},
	}
	out, guardLog, failureLog := runBounded(t, context.Background(), root, guards)
	if out.err != nil {
		t.Fatalf("Run: %v", out.err)
	}
	if out.verdict != VerdictFail {
		t.Errorf("verdict = %q, want fail", out.verdict)
	}
	want := []struct {
		status string
		code   int
		errSub string
	}{
		{StatusPass, 0, ""},
		{StatusFail, 3, "exited with status 3"},
		{StatusTimeout, -1, "timed out after 2s"},
		{StatusPass, 0, ""}, // a failure does not stop the guards after it
	}
	if len(out.results) != len(want) {
		t.Fatalf("got %d results, want %d: %+v", len(out.results), len(want), out.results)
	}
	for i, w := range want {
		r := out.results[i]
		if r.Name != guards[i].Name || r.Status != w.status || r.ExitCode != w.code || !strings.Contains(r.Error, w.errSub) || (w.errSub == "") != (r.Error == "") {
			t.Errorf("result %d = %+v, want status %s, exit %d, error %q", i, r, w.status, w.code, w.errSub)
		}
	}

	log, _ := readOrEmpty(guardLog)
	wantRe := `(?s)^=== guard build: echo building; pwd ===\nbuilding\n` + regexp.QuoteMeta(root) + `\n=== guard build: pass, exit 0, [0-9.]+m?s ===\n` +
		`=== guard test: .*? ===\nFAIL: TestX\n=== guard test: fail, exit 3, [0-9.]+m?s, exited with status 3 ===\n` +
		`=== guard slow: .*? ===\nwaiting\n=== guard slow: timeout, exit -1, [0-9.]+m?s, timed out after 2s; its process group was killed ===\n` +
		`=== guard lint: printf 'no newline at the end' ===\nno newline at the end\n=== guard lint: pass, exit 0, [0-9.]+m?s ===\n$`
	if !regexp.MustCompile(wantRe).MatchString(log) {
		t.Errorf("guard.log:\n%s\nwant it to match:\n%s", log, wantRe)
	}
	failure, ok := readOrEmpty(failureLog)
	if !ok || strings.Contains(failure, "STALE") || strings.Contains(failure, "guard build") || strings.Contains(failure, "guard lint") ||
		!strings.Contains(failure, "FAIL: TestX") || !strings.Contains(failure, "=== guard slow: timeout") {
		t.Errorf("failure.log = %q, want exactly the failing and timed-out sections", failure)
	}

	// The timed-out guard's background grandchild died with its group.
	data, err := os.ReadFile(filepath.Join(root, "gc.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !strings.Contains(string(stat), ") Z ") {
		t.Errorf("grandchild %d of the timed-out guard still runs", pid)
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

func TestRunAllPass(t *testing.T) {
	out, guardLog, failureLog := runBounded(t, context.Background(), t.TempDir(), []Spec{{Name: "a", Run: "true"}, {Name: "b", Run: "exit 0"}})
	if out.err != nil || out.verdict != VerdictPass || len(out.results) != 2 {
		t.Fatalf("Run = %+v", out)
	}
	if _, ok := readOrEmpty(failureLog); ok {
		t.Errorf("failure.log exists although every guard passed")
	}
	if log, _ := readOrEmpty(guardLog); strings.Contains(log, "STALE") || strings.Count(log, "=== guard") != 4 {
		t.Errorf("guard.log = %q", log)
	}
}

func TestRunNoGuards(t *testing.T) {
	out, guardLog, failureLog := runBounded(t, context.Background(), t.TempDir(), nil)
	if out.err != nil || out.verdict != VerdictPass || out.results != nil {
		t.Fatalf("Run with no guards = %+v, want pass and no results", out)
	}
	if log, ok := readOrEmpty(guardLog); !ok || log != "" {
		t.Errorf("guard.log = %q, %v; want an empty file", log, ok)
	}
	if _, ok := readOrEmpty(failureLog); ok {
		t.Errorf("failure.log exists")
	}
}

func TestRunCannotStart(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "gone")
	out, guardLog, failureLog := runBounded(t, context.Background(), missing, []Spec{{Name: "test", Run: "true"}})
	if out.err != nil || out.verdict != VerdictFail || len(out.results) != 1 {
		t.Fatalf("Run in a missing root = %+v, want one failed result and no error", out)
	}
	if r := out.results[0]; r.Status != StatusFail || !strings.Contains(r.Error, "could not start") || !strings.Contains(r.Error, "gone") {
		t.Errorf("result = %+v", r)
	}
	log, _ := readOrEmpty(guardLog)
	failure, _ := readOrEmpty(failureLog)
	if !strings.Contains(log, "could not start") || failure != log {
		t.Errorf("guard.log = %q, failure.log = %q", log, failure)
	}
}

func TestRunOutputLimit(t *testing.T) {
	const limit = 4096
	out, guardLog, _ := runBounded(t, context.Background(), t.TempDir(), []Spec{
		{Name: "noisy", Run: "echo FIRST; head -c 200000 /dev/zero | tr '\\0' x; echo; echo LAST; exit 1", OutputLimit: config.Size(limit)},
	})
	if out.err != nil || out.verdict != VerdictFail {
		t.Fatalf("Run = %+v", out)
	}
	log, _ := readOrEmpty(guardLog)
	header := "=== guard noisy: " + "echo FIRST; head -c 200000 /dev/zero | tr '\\0' x; echo; echo LAST; exit 1" + " ===\n"
	i := strings.Index(log, "=== guard noisy: fail")
	if !strings.HasPrefix(log, header) || i < 0 {
		t.Fatalf("guard.log lacks header or footer: %.200q", log)
	}
	body := log[len(header):i]
	if len(body) > limit || !strings.HasPrefix(body, "FIRST\n") || !strings.HasSuffix(body, "LAST\n") || !strings.Contains(body, "bytes of output cut here") {
		t.Errorf("guard output part is %d bytes (limit %d): head %.20q, tail %.20q", len(body), limit, body, body[max(0, len(body)-20):])
	}
}

func TestRunCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	root := t.TempDir()
	go func() {
		// Cancel once the first guard is running.
		for i := 0; i < 3000; i++ {
			if _, err := os.Stat(filepath.Join(root, "started")); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	out, _, _ := runBounded(t, ctx, root, []Spec{
		{Name: "long", Run: "touch started; sleep 60"},
		{Name: "never", Run: "touch never"},
	})
	if !errors.Is(out.err, context.Canceled) || out.verdict != VerdictFail {
		t.Fatalf("Run = %+v, want a canceled error and fail", out)
	}
	if len(out.results) != 1 || out.results[0].Error != "interrupted" {
		t.Errorf("results = %+v, want the interrupted guard only", out.results)
	}
	if _, err := os.Stat(filepath.Join(root, "never")); err == nil {
		t.Errorf("a guard ran after cancellation")
	}
}

// TestRunPassesEnv checks that the guards get the runner's environment
// plus the given entries, which win over the runner's, and never the
// runner's secrets (the engine key's file), with or without entries.
func TestRunPassesEnv(t *testing.T) {
	t.Setenv("GUARD_TEST_INHERITED", "from the runner")
	t.Setenv("RUNNER_ITERATION", "stale")
	t.Setenv(sandbox.EngineKeyVar, "/etc/runner/engine.key")
	dir := t.TempDir()
	guardLog, failureLog := filepath.Join(dir, "guard.log"), filepath.Join(dir, "failure.log")
	guards := []Spec{{Name: "env", Run: `echo "iteration=$RUNNER_ITERATION inherited=$GUARD_TEST_INHERITED key=${` + sandbox.EngineKeyVar + `:-unset}"`}}
	_, verdict, err := Run(context.Background(), dir, guards, guardLog, failureLog, time.Second, []string{"RUNNER_ITERATION=7"})
	if err != nil || verdict != VerdictPass {
		t.Fatalf("Run: %s, %v", verdict, err)
	}
	out, _ := readOrEmpty(guardLog)
	if !strings.Contains(out, "iteration=7 inherited=from the runner key=unset") {
		t.Errorf("guard.log = %q, want the given RUNNER_ITERATION, the inherited variable and no engine key", out)
	}
	if _, _, err := Run(context.Background(), dir, guards, guardLog, failureLog, time.Second, nil); err != nil {
		t.Fatal(err)
	}
	if out, _ := readOrEmpty(guardLog); !strings.Contains(out, "iteration=stale inherited=from the runner key=unset") {
		t.Errorf("guard.log = %q, want the runner's variables without the engine key", out)
	}
}

const junitPass = `<testsuite name="s"><testcase classname="s" name="a"/></testsuite>`

// A JUnit report counts only when the guard wrote it during its run: the
// files matching its path are removed before it starts, so that one the
// agent left (dated in the future, say) is never read as the guard's;
// without one the guard fails, whatever its exit status.
func TestJUnitReportWrittenByTheGuard(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "build", "test-reports")
	os.MkdirAll(dir, 0o755)
	stale := filepath.Join(dir, "junit.xml")
	os.WriteFile(stale, []byte(junitPass), 0o644)
	future := time.Now().Add(24 * time.Hour)
	os.Chtimes(stale, future, future)
	os.Mkdir(filepath.Join(dir, "folder.xml"), 0o755) // a folder matching is left alone
	guards := []Spec{
		{Name: "crashes", Run: "exit 0", Report: "junit:build/test-reports/*.xml"},
		{Name: "writes", Run: `printf '<testsuite name="s"><testcase classname="s" name="b"><failure message="x"/></testcase></testsuite>' > build/test-reports/junit.xml`, Report: "junit:build/test-reports/*.xml"},
	}
	out, _, _ := runBounded(t, context.Background(), root, guards)
	if out.err != nil {
		t.Fatal(out.err)
	}
	crashed := out.results[0]
	if crashed.Status != StatusFail || !strings.Contains(crashed.Error, "no report written") || crashed.Report != nil || !errors.Is(crashed.ReportErr, ErrNoReportWritten) {
		t.Errorf("a guard that wrote no report: %+v", crashed)
	}
	if data, _ := os.ReadFile(stale); strings.Contains(string(data), `name="a"`) {
		t.Error("the stale report is still there")
	}
	if _, err := os.Stat(filepath.Join(dir, "folder.xml")); err != nil {
		t.Error("a folder matching the pattern was removed")
	}
	wrote := out.results[1]
	if wrote.Report == nil || len(wrote.Report.Tests) != 1 || wrote.Report.Tests[0].Name != "s.b" {
		t.Errorf("the guard's own report: %+v, %v", wrote.Report, wrote.ReportErr)
	}
}

// The removal never follows a link out of the working tree.
func TestJUnitRemovalStaysInside(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	keep := filepath.Join(outside, "junit.xml")
	os.WriteFile(keep, []byte(junitPass), 0o644)
	os.Symlink(outside, filepath.Join(root, "reports"))
	guards := []Spec{{Name: "g", Run: "true", Report: "junit:reports/*.xml"}}
	out, _, _ := runBounded(t, context.Background(), root, guards)
	if out.err != nil {
		t.Fatal(out.err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("a file outside the working tree was removed: %v", err)
	}
	if r := out.results[0]; r.Status != StatusFail {
		t.Errorf("result %+v: want a failure (the old report could not be removed, or none was written)", r)
	}
}

//go:build unix

package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/fakeagent"
)

// The test binary doubles as the fake agent when this variable is set.
const fakeEnvVar = "PROC_TEST_BE_FAKEAGENT"

// directEnvVar=1 runs the tests with commands started directly, as where
// the supervisor cannot be used; otherwise they run under the supervisor,
// played by the test binary.
const directEnvVar = "PROC_TEST_DIRECT"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == SuperviseArg {
		os.Exit(Supervise(os.Args[2:]))
	}
	if os.Getenv(fakeEnvVar) == "1" {
		os.Exit(fakeagent.Main())
	}
	if spec := os.Getenv(miniRunnerEnv); spec != "" {
		os.Exit(miniRunner(spec))
	}
	if os.Getenv(directEnvVar) != "1" {
		useTestSupervisor()
	}
	os.Exit(m.Run())
}

// fakeSpec returns a Spec running the fake agent with the given script in
// a fresh directory.
func fakeSpec(t *testing.T, script string) Spec {
	t.Helper()
	dir := t.TempDir()
	sp := filepath.Join(dir, "script.json")
	if err := os.WriteFile(sp, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Spec{
		Argv: []string{exe},
		Dir:  dir,
		Env:  append(os.Environ(), fakeEnvVar+"=1", "FAKEAGENT_SCRIPT="+sp),
		Log:  filepath.Join(dir, "out.log"),
	}
}

// runBounded runs s and fails the test if Run does not return within limit.
func runBounded(t *testing.T, ctx context.Context, s Spec, limit time.Duration) Result {
	t.Helper()
	done := make(chan Result, 1)
	go func() { done <- Run(ctx, s) }()
	select {
	case r := <-done:
		return r
	case <-time.After(limit):
		t.Fatalf("Run(%v) did not return within %s", s.Argv, limit)
		return Result{}
	}
}

// pidGone reports whether pid no longer runs (a zombie counts as gone).
func pidGone(pid int) bool {
	if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		st, _, ok := parseStat(data)
		return ok && (st == 'Z' || st == 'X')
	} else if runtime.GOOS == "linux" {
		return true
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read grandchild pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestRunExitCodesAndStartErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name      string
		spec      Spec
		wantCode  int
		wantStart string
	}{
		{"success", Spec{Argv: []string{"sh", "-c", "exit 0"}}, 0, ""},
		{"failure", Spec{Argv: []string{"sh", "-c", "exit 3"}}, 3, ""},
		{"missing program", Spec{Argv: []string{"runner-no-such-program"}}, -1, "executable file not found"},
		{"missing dir", Spec{Argv: []string{"sh", "-c", "true"}, Dir: filepath.Join(dir, "nope")}, -1, "working directory: stat " + filepath.Join(dir, "nope") + ": no such file"},
		{"empty argv", Spec{}, -1, "no program given"},
		{"log in missing dir", Spec{Argv: []string{"true"}, Log: filepath.Join(dir, "nope", "x.log")}, -1, "open log"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runBounded(t, context.Background(), tt.spec, 30*time.Second)
			if r.ExitCode != tt.wantCode {
				t.Errorf("ExitCode = %d, want %d", r.ExitCode, tt.wantCode)
			}
			if tt.wantStart == "" && r.StartErr != nil {
				t.Errorf("StartErr = %v, want nil", r.StartErr)
			}
			if tt.wantStart != "" && (r.StartErr == nil || !strings.Contains(r.StartErr.Error(), tt.wantStart)) {
				t.Errorf("StartErr = %v, want it to mention %q", r.StartErr, tt.wantStart)
			}
			if r.TimedOut || r.Idle || r.Canceled {
				t.Errorf("unexpected stop flags in %+v", r)
			}
		})
	}
}

func TestRunCanceledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := runBounded(t, ctx, Spec{Argv: []string{"sh", "-c", "true"}}, 30*time.Second)
	if !r.Canceled || r.StartErr == nil {
		t.Fatalf("Run with a canceled context = %+v, want Canceled and a StartErr", r)
	}
}

func TestRunStdoutSinkGetsOnlyStdout(t *testing.T) {
	log := filepath.Join(t.TempDir(), "out.log")
	tail := NewTailBuffer(1024)
	r := runBounded(t, context.Background(), Spec{
		Argv:   []string{"sh", "-c", "echo out; echo err >&2"},
		Log:    log,
		Stdout: tail,
	}, 30*time.Second)
	if r.ExitCode != 0 || r.StartErr != nil || r.OutputErr != nil {
		t.Fatalf("Run = %+v", r)
	}
	if got := string(tail.Bytes()); got != "out\n" {
		t.Errorf("stdout sink = %q, want %q", got, "out\n")
	}
	got := readFile(t, log)
	if !strings.Contains(got, "out\n") || !strings.Contains(got, "err\n") || len(got) != 8 {
		t.Errorf("log = %q, want both lines", got)
	}
	if r.LogBytes != 8 || r.CutBytes != 0 {
		t.Errorf("LogBytes, CutBytes = %d, %d; want 8, 0", r.LogBytes, r.CutBytes)
	}
}

func TestRunStderrSinkWithoutLog(t *testing.T) {
	out, errs := NewTailBuffer(1024), NewTailBuffer(1024)
	r := runBounded(t, context.Background(), Spec{
		Argv:   []string{"sh", "-c", "echo out; echo err >&2; echo more >&2"},
		Stdout: out,
		Stderr: errs,
	}, 30*time.Second)
	if r.ExitCode != 0 || r.StartErr != nil || r.OutputErr != nil {
		t.Fatalf("Run = %+v", r)
	}
	if got, want := string(out.Bytes()), "out\n"; got != want {
		t.Errorf("stdout sink = %q, want %q", got, want)
	}
	if got, want := string(errs.Bytes()), "err\nmore\n"; got != want {
		t.Errorf("stderr sink = %q, want %q", got, want)
	}
	if r.LogBytes != 13 {
		t.Errorf("LogBytes = %d, want 13", r.LogBytes)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestRunSinkErrorStillDrains(t *testing.T) {
	s := Spec{Argv: []string{"sh", "-c", "head -c 300000 /dev/zero"}, Stdout: failingWriter{}}
	r := runBounded(t, context.Background(), s, 30*time.Second)
	if r.ExitCode != 0 || r.LogBytes != 300000 {
		t.Fatalf("Run = %+v, want exit 0 with all 300000 bytes drained", r)
	}
	if r.OutputErr == nil || !strings.Contains(r.OutputErr.Error(), "disk full") {
		t.Errorf("OutputErr = %v, want the sink's error", r.OutputErr)
	}
	s = Spec{Argv: []string{"sh", "-c", "head -c 300000 /dev/zero >&2"}, Stderr: failingWriter{}}
	r = runBounded(t, context.Background(), s, 30*time.Second)
	if r.ExitCode != 0 || r.LogBytes != 300000 || r.OutputErr == nil || !strings.Contains(r.OutputErr.Error(), "write stderr copy: disk full") {
		t.Errorf("Run = %+v, want all 300000 bytes drained and the stderr sink's error", r)
	}
}

func TestRunTruncatesHeadAndTailWithBoundedMemory(t *testing.T) {
	const total = 64 << 20
	const limit = 64 << 10
	s := Spec{
		Argv: []string{"sh", "-c", fmt.Sprintf(
			"echo FIRST LINE; head -c %d /dev/zero | tr '\\0' f; echo LAST LINE", total-len("FIRST LINE\n")-len("LAST LINE\n"))},
		Log:      filepath.Join(t.TempDir(), "out.log"),
		LogLimit: limit,
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := runBounded(t, context.Background(), s, 2*time.Minute)
	runtime.ReadMemStats(&after)
	if r.ExitCode != 0 || r.StartErr != nil || r.OutputErr != nil {
		t.Fatalf("Run = %+v", r)
	}
	wantBytes := int64(total)
	if r.LogBytes != wantBytes {
		t.Errorf("LogBytes = %d, want %d", r.LogBytes, wantBytes)
	}
	log := readFile(t, s.Log)
	if int64(len(log)) > limit {
		t.Errorf("log is %d bytes, over the %d limit", len(log), limit)
	}
	if !strings.HasPrefix(log, "FIRST LINE\n") || !strings.HasSuffix(log, "LAST LINE\n") {
		t.Errorf("log does not keep both head and tail: starts %q, ends %q", log[:20], log[len(log)-20:])
	}
	marker := fmt.Sprintf("[runner: %d bytes of output cut here]\n", r.CutBytes)
	if strings.Count(log, marker) != 1 {
		t.Errorf("log does not hold exactly one marker %q", marker)
	}
	if kept := int64(len(log) - len(marker)); kept+r.CutBytes != wantBytes && kept-1+r.CutBytes != wantBytes {
		t.Errorf("kept %d + cut %d bytes != %d received", kept, r.CutBytes, wantBytes)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Errorf("Run allocated %d bytes for %d bytes of output; memory is not bounded", grew, total)
	}
}

func TestRunLargeStdinWhileChildPrintsFirst(t *testing.T) {
	// The child prints 1 MiB before it reads stdin: a runner writing stdin
	// before draining stdout would deadlock on full pipes.
	s := fakeSpec(t, `{"default": {"stdin": "last", "filler": 1048576, "save_prompt": "prompt.seen"}}`)
	prompt := bytes.Repeat([]byte("prompt line\n"), (1<<20)/12+1)
	s.Stdin = prompt
	r := runBounded(t, context.Background(), s, time.Minute)
	if r.ExitCode != 0 || r.StartErr != nil {
		t.Fatalf("Run = %+v", r)
	}
	if got := readFile(t, filepath.Join(s.Dir, "prompt.seen")); got != string(prompt) {
		t.Errorf("child read %d bytes of stdin, want the %d-byte prompt", len(got), len(prompt))
	}
	if r.LogBytes != 1<<20 {
		t.Errorf("LogBytes = %d, want %d", r.LogBytes, 1<<20)
	}
}

func TestRunStdinIgnoredByChild(t *testing.T) {
	// A child that exits without reading a large stdin must not block us.
	s := Spec{Argv: []string{"sh", "-c", "exit 0"}, Stdin: bytes.Repeat([]byte("x"), 4<<20)}
	if r := runBounded(t, context.Background(), s, 30*time.Second); r.ExitCode != 0 {
		t.Fatalf("Run = %+v", r)
	}
}

func TestRunTimeoutKillsWholeGroup(t *testing.T) {
	// sh starts fast, so the grandchild exists well before the timeout.
	dir := t.TempDir()
	s := Spec{
		Argv: []string{"sh", "-c", "sleep 60 & echo $! > gc.pid; echo started; sleep 60"},
		Dir:  dir,
		Log:  filepath.Join(dir, "out.log"),
	}
	s.Timeout = 2 * time.Second
	s.Grace = time.Second
	var pgid int
	s.OnStart = func(_, g int) { pgid = g }
	r := runBounded(t, context.Background(), s, s.Timeout+s.Grace+killWait+drainWait+10*time.Second)
	if !r.TimedOut || r.Idle || r.Canceled {
		t.Fatalf("Run = %+v, want TimedOut only", r)
	}
	if r.Signal != "SIGTERM" || r.ExitCode != -1 {
		t.Errorf("Signal, ExitCode = %q, %d; want SIGTERM, -1", r.Signal, r.ExitCode)
	}
	gc := readPID(t, filepath.Join(s.Dir, "gc.pid"))
	if !pidGone(gc) {
		t.Errorf("grandchild %d (holding stdout) is still running", gc)
		syscall.Kill(gc, syscall.SIGKILL)
	}
	if GroupAlive(pgid) {
		t.Errorf("process group %d still alive", pgid)
	}
	if !strings.Contains(readFile(t, s.Log), "started\n") {
		t.Errorf("log lost the output printed before the timeout")
	}
}

func TestRunStrayGrandchildStoppedAfterExit(t *testing.T) {
	// The main process exits at once, leaving a grandchild that holds
	// stdout: Run must stop it instead of waiting for the pipe.
	s := fakeSpec(t, `{"default": {"grandchild": {"sleep": "60s", "pid_file": "gc.pid"}, "exit": 0}}`)
	s.Grace = time.Second
	r := runBounded(t, context.Background(), s, s.Grace+killWait+drainWait+10*time.Second)
	if r.ExitCode != 0 || r.TimedOut || r.Canceled {
		t.Fatalf("Run = %+v, want a normal exit", r)
	}
	if gc := readPID(t, filepath.Join(s.Dir, "gc.pid")); !pidGone(gc) {
		t.Errorf("grandchild %d outlived the run", gc)
		syscall.Kill(gc, syscall.SIGKILL)
	}
}

func TestRunCancelEscalatesToKill(t *testing.T) {
	s := fakeSpec(t, `{"default": {"ignore_term": true, "stdout": "ready\n", "sleep": "60s"}}`)
	s.Grace = 500 * time.Millisecond
	tail := NewTailBuffer(64)
	s.Stdout = tail
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Cancel once the child has installed its handler and printed.
		for i := 0; i < 3000 && tail.Total() == 0; i++ {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	r := runBounded(t, ctx, s, s.Grace+killWait+drainWait+30*time.Second)
	if !r.Canceled || r.TimedOut || r.Idle {
		t.Fatalf("Run = %+v, want Canceled only", r)
	}
	if r.Signal != "SIGKILL" {
		t.Errorf("Signal = %q, want SIGKILL for a child ignoring SIGTERM", r.Signal)
	}
}

func TestRunIdleTimeout(t *testing.T) {
	tests := []struct {
		name     string
		script   string
		idle     time.Duration
		wantIdle bool
	}{
		{"silent child is stopped", "echo started; sleep 60", 300 * time.Millisecond, true},
		{"chatty child is not", "for i in 1 2 3 4 5 6; do echo $i; sleep 0.1; done", 5 * time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Spec{Argv: []string{"sh", "-c", tt.script}, IdleTimeout: tt.idle, Grace: time.Second}
			r := runBounded(t, context.Background(), s, tt.idle+s.Grace+killWait+drainWait+30*time.Second)
			if r.Idle != tt.wantIdle || r.TimedOut || r.Canceled {
				t.Fatalf("Run = %+v, want Idle %v only", r, tt.wantIdle)
			}
			if !tt.wantIdle && r.ExitCode != 0 {
				t.Errorf("ExitCode = %d, want 0", r.ExitCode)
			}
		})
	}
}

func TestRunOnStartSeesLiveGroup(t *testing.T) {
	var pid, pgid int
	var alive bool
	s := Spec{
		Argv:    []string{"sh", "-c", "sleep 0.2"},
		OnStart: func(p, g int) { pid, pgid, alive = p, g, GroupAlive(g) },
	}
	r := runBounded(t, context.Background(), s, 30*time.Second)
	if r.ExitCode != 0 {
		t.Fatalf("Run = %+v", r)
	}
	if pid == 0 || pid != pgid || !alive {
		t.Errorf("OnStart got pid %d, pgid %d, alive %v; want pid == pgid and a live group", pid, pgid, alive)
	}
	if GroupAlive(pgid) {
		t.Errorf("group %d alive after Run returned", pgid)
	}
}

func TestKillGroup(t *testing.T) {
	for _, ignoreTerm := range []bool{false, true} {
		t.Run(fmt.Sprintf("ignore_term=%v", ignoreTerm), func(t *testing.T) {
			script := "sleep 60"
			if ignoreTerm {
				script = "trap '' TERM; sleep 60"
			}
			cmd := exec.Command("sh", "-c", script)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waited := make(chan error, 1)
			go func() { waited <- cmd.Wait() }() // reap, so the leader does not linger as a zombie
			pgid := cmd.Process.Pid
			if !GroupAlive(pgid) {
				t.Fatalf("GroupAlive(%d) = false for a running group", pgid)
			}
			if err := KillGroup(pgid, 300*time.Millisecond); err != nil {
				t.Fatalf("KillGroup: %v", err)
			}
			if GroupAlive(pgid) {
				t.Errorf("group %d alive after KillGroup", pgid)
			}
			select {
			case <-waited:
			case <-time.After(10 * time.Second):
				t.Fatal("leader not reaped after KillGroup")
			}
			if err := KillGroup(pgid, time.Second); err != nil {
				t.Errorf("KillGroup on a gone group = %v, want nil", err)
			}
		})
	}
	for _, bad := range []int{-5, 0, 1} {
		if GroupAlive(bad) {
			t.Errorf("GroupAlive(%d) = true", bad)
		}
		if err := KillGroup(bad, time.Second); err == nil {
			t.Errorf("KillGroup(%d) = nil, want an error", bad)
		}
	}
}

// TestRunExitRecord: Spec.ExitFile gets the command's exit status as soon
// as it is reaped, and says whether it was stopped (here by a timeout)
// rather than ending by itself. TestRunWithoutSupervisor runs it again
// with the runner as the reaper.
func TestRunExitRecord(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "exit.json")
	res := Run(context.Background(), Spec{Argv: []string{"sh", "-c", "exit 3"}, ExitFile: path})
	if res.ExitCode != 3 {
		t.Fatalf("exit %d, want 3", res.ExitCode)
	}
	rec, err := ReadExitRecord(path)
	if err != nil || rec.Code != 3 || rec.Signal != "" || rec.Stopped {
		t.Fatalf("exit record %+v (%v); want code 3, not stopped", rec, err)
	}
	res = Run(context.Background(), Spec{Argv: []string{"sleep", "30"}, Timeout: 50 * time.Millisecond, Grace: time.Second, ExitFile: path})
	if !res.TimedOut {
		t.Fatalf("not timed out: %+v", res)
	}
	rec, err = ReadExitRecord(path)
	if err != nil || rec.Signal != "SIGTERM" || !rec.Stopped {
		t.Fatalf("exit record %+v (%v); want killed by SIGTERM, stopped", rec, err)
	}
}

//go:build linux

package proc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/sandbox"
)

// needLandlock skips where the kernel has no Landlock and returns its ABI.
func needLandlock(tb testing.TB) int {
	tb.Helper()
	abi, err := sandbox.ABI()
	if abi == 0 {
		tb.Skipf("no Landlock on this system: %v", err)
	}
	return abi
}

// confineModes runs f under the supervisor (the runner's way, when the
// system has one) and with the command started directly, through the
// binary given to UseConfinement.
func confineModes(t *testing.T, f func(t *testing.T)) {
	sc := supervisorConfig.Load()
	t.Run("supervised", func(t *testing.T) {
		if sc == nil {
			t.Skip("no supervisor (PROC_TEST_DIRECT, or none on this system)")
		}
		f(t)
	})
	t.Run("direct", func(t *testing.T) {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		supervisorConfig.Store(nil)
		UseConfinement(exe)
		defer func() {
			UseConfinement("")
			supervisorConfig.Store(sc)
		}()
		f(t)
	})
}

// TestRunConfined: Spec.Confine confines the command and what it starts
// to the room, whether it runs under the supervisor or directly; the
// bare program name is found in the runner's $PATH as usual.
func TestRunConfined(t *testing.T) {
	needLandlock(t)
	confineModes(t, func(t *testing.T) {
		room, outside := t.TempDir(), t.TempDir()
		log := filepath.Join(room, "out.log")
		r := Run(context.Background(), Spec{
			Argv: []string{"sh", "-c", `exec 2>&1
echo in > room-file && echo wrote in the room
echo out > "$1/file" || echo denied outside
sh -c 'echo out > "$1/grandchild"' sh "$1" || echo denied to the grandchild
echo gone > /dev/null && echo wrote to /dev/null
cat /etc/passwd > /dev/null && echo read /etc/passwd
`, "sh", outside},
			Dir:     room,
			Log:     log,
			Confine: &sandbox.Room{Writable: []string{room}},
		})
		if r.StartErr != nil || r.ExitCode != 0 {
			t.Fatalf("Run = %+v", r)
		}
		data, _ := os.ReadFile(log)
		got := string(data)
		for _, want := range []string{"wrote in the room\n", "Permission denied\ndenied outside\n", "Permission denied\ndenied to the grandchild\n", "wrote to /dev/null\n", "read /etc/passwd\n"} {
			if !strings.Contains(got, want) {
				t.Errorf("log lacks %q:\n%s", want, got)
			}
		}
		if entries, _ := os.ReadDir(outside); len(entries) != 0 {
			t.Errorf("%d files written outside the room", len(entries))
		}
		if b, err := os.ReadFile(filepath.Join(room, "room-file")); err != nil || string(b) != "in\n" {
			t.Errorf("room-file = %q, %v", b, err)
		}
	})
}

// TestRunConfinedStops: a confined command is stopped on timeout as any
// other (the supervisor, outside its sandbox, may signal it), and with
// ScopeSignals it cannot signal the runner.
func TestRunConfinedStops(t *testing.T) {
	abi := needLandlock(t)
	confineModes(t, func(t *testing.T) {
		dir := t.TempDir()
		room := &sandbox.Room{Writable: []string{dir}, ScopeSignals: true}
		start := time.Now()
		r := runBounded(t, context.Background(), Spec{Argv: []string{"sleep", "30"}, Timeout: 200 * time.Millisecond, Grace: time.Second, Confine: room}, 10*time.Second)
		if !r.TimedOut || r.Signal != "SIGTERM" || time.Since(start) > 5*time.Second {
			t.Errorf("Run = %+v after %s", r, time.Since(start))
		}
		if abi < 6 {
			return
		}
		log := filepath.Join(dir, "out.log")
		r = Run(context.Background(), Spec{Argv: []string{"sh", "-c", `kill -0 "$1" && echo signalled the runner`, "sh", strconv.Itoa(os.Getpid())}, Log: log, Confine: room})
		data, _ := os.ReadFile(log)
		if r.StartErr != nil || r.ExitCode == 0 || !strings.Contains(string(data), "Operation not permitted") {
			t.Errorf("Run = %+v, log %q", r, data)
		}
	})
}

// TestRunConfineImpossible: where the command cannot be confined, Run
// does not start it and says why.
func TestRunConfineImpossible(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	spec := func() Spec {
		return Spec{Argv: []string{"sh", "-c", "touch " + marker}, Dir: dir, Confine: &sandbox.Room{Writable: []string{dir}}}
	}
	check := func(t *testing.T, r Result, want string) {
		t.Helper()
		if r.StartErr == nil || !strings.Contains(r.StartErr.Error(), want) || r.ExitCode != -1 {
			t.Errorf("Run = %+v; want StartErr with %q", r, want)
		}
		if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the command ran: %v", err)
		}
	}

	t.Run("no Landlock", func(t *testing.T) {
		defer func(f func() (int, error)) { landlockABI = f }(landlockABI)
		landlockABI = func() (int, error) { return 0, errors.New("the kernel has no Landlock (test)") }
		check(t, Run(context.Background(), spec()), "start sh: cannot confine it: the kernel has no Landlock (test)")
	})
	t.Run("relative path", func(t *testing.T) {
		needLandlock(t)
		s := spec()
		s.Confine = &sandbox.Room{Writable: []string{"."}}
		check(t, Run(context.Background(), s), `start sh: cannot confine it: bad room: writable path "." is not absolute`)
	})
	t.Run("no binary", func(t *testing.T) {
		needLandlock(t)
		sc := supervisorConfig.Load()
		supervisorConfig.Store(nil)
		defer supervisorConfig.Store(sc)
		check(t, Run(context.Background(), spec()), "start sh: cannot confine it: no binary to confine it with")
	})
	t.Run("missing program", func(t *testing.T) {
		needLandlock(t)
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		UseConfinement(exe)
		defer UseConfinement("")
		s := spec()
		s.Argv = []string{"runner-no-such-program"}
		check(t, Run(context.Background(), s), `start runner-no-such-program: exec: "runner-no-such-program": executable file not found in $PATH`)
		s.Argv = []string{"./missing"}
		check(t, Run(context.Background(), s), "start ./missing: ")
	})
}

// BenchmarkConfinedStart compares one Run of `true` under the supervisor
// (the runner's way), not confined, confined by Landlock alone (the
// runner's binary restricting itself, then executing true), and in a
// room of namespaces (the helper started in new user, mount and PID
// namespaces, building the walls, then starting true as its child), with
// the process limit (a cgroup pids.max) and without.
//
//	go test ./internal/proc -run '^$' -bench ConfinedStart -benchtime 200x -count 5
func BenchmarkConfinedStart(b *testing.B) {
	needLandlock(b)
	if supervisorConfig.Load() == nil {
		b.Skip("no supervisor")
	}
	dir := b.TempDir()
	landlock := &sandbox.Room{Writable: []string{dir}, ScopeSignals: true}
	modes := []struct {
		name string
		room *sandbox.Room
	}{{"unconfined", nil}, {"landlock", landlock}}
	if sandbox.ProbeNamespaces(sandbox.NamespacesUser) == nil {
		ns := *landlock
		ns.Namespaces = sandbox.NamespacesUser
		limited := ns
		limited.MaxProcesses = 512
		modes = append(modes, struct {
			name string
			room *sandbox.Room
		}{"namespaces", &ns}, struct {
			name string
			room *sandbox.Room
		}{"namespaces+limit", &limited})
	}
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if r := Run(context.Background(), Spec{Argv: []string{"true"}, Confine: m.room}); r.ExitCode != 0 {
					b.Fatalf("Run = %+v", r)
				}
			}
		})
	}
}

// needNamespaces skips where the machine cannot build a room in user
// namespaces, and returns the room's namespaces.
func needNamespaces(tb testing.TB) string {
	tb.Helper()
	needLandlock(tb)
	if err := sandbox.ProbeNamespaces(sandbox.NamespacesUser); err != nil {
		tb.Skipf("no user namespaces here: %v", err)
	}
	return sandbox.NamespacesUser
}

// TestRunConfinedNamespaces: a room in namespaces is built whether the
// command runs under the supervisor or directly: outside the room even
// chmod fails, the room's /proc holds its processes only, and the
// command's exit status comes through the helper; a timeout stops it,
// and it reads as killed by the signal, as an unconfined command does.
func TestRunConfinedNamespaces(t *testing.T) {
	ns := needNamespaces(t)
	confineModes(t, func(t *testing.T) {
		room, outside := t.TempDir(), t.TempDir()
		log := filepath.Join(room, "out.log")
		r := Run(context.Background(), Spec{
			Argv: []string{"sh", "-c", `exec 2>&1
chmod 777 "$1" || echo chmod refused
test -e /proc/$2 && echo sees the runner
echo in > room-file && echo wrote in the room
exit 7
`, "sh", outside, strconv.Itoa(os.Getpid())},
			Dir:     room,
			Log:     log,
			Confine: &sandbox.Room{Writable: []string{room}, Namespaces: ns, ScopeSignals: true},
		})
		data, _ := os.ReadFile(log)
		if r.StartErr != nil || r.ExitCode != 7 {
			t.Fatalf("Run = %+v\n%s", r, data)
		}
		got := string(data)
		for _, want := range []string{"Read-only file system\nchmod refused\n", "wrote in the room\n"} {
			if !strings.Contains(got, want) {
				t.Errorf("log lacks %q:\n%s", want, got)
			}
		}
		if strings.Contains(got, "sees the runner") {
			t.Errorf("the room sees the runner:\n%s", got)
		}
		if st, _ := os.Stat(outside); st.Mode().Perm() == 0o777 {
			t.Error("chmod outside the room went through")
		}

		start := time.Now()
		r = runBounded(t, context.Background(), Spec{Argv: []string{"sleep", "30"}, Timeout: 200 * time.Millisecond, Grace: time.Second,
			Confine: &sandbox.Room{Writable: []string{room}, Namespaces: ns}}, 10*time.Second)
		if !r.TimedOut || r.Signal != "SIGTERM" || time.Since(start) > 5*time.Second {
			t.Errorf("Run = %+v after %s", r, time.Since(start))
		}
	})
}

// TestRunProcessLimit: under the supervisor, a confined command whose
// room has MaxProcesses gets a cgroup pids.max (v2, or v1 on a hybrid
// host): its fork flood fails inside it, while a command running beside
// it, in another supervisor, starts all it asks for.
func TestRunProcessLimit(t *testing.T) {
	ns := needNamespaces(t)
	if supervisorConfig.Load() == nil {
		t.Skip("no supervisor")
	}
	how, why := ProcessLimit()
	if how == "" {
		t.Skipf("no cgroup limits processes here: %s", why)
	}
	t.Logf("processes limited by %s", how)
	room := t.TempDir()
	flood := `n=0; while [ $n -lt 200 ]; do sleep 30 & n=$((n+1)); done; echo started all`
	count := `n=0; while [ $n -lt 100 ]; do sleep 30 & n=$((n+1)); done; echo started $n`
	floodLog, otherLog := filepath.Join(room, "flood.log"), filepath.Join(room, "other.log")
	done := make(chan Result)
	go func() {
		done <- Run(context.Background(), Spec{Argv: []string{"sh", "-c", flood}, Log: floodLog, Timeout: 20 * time.Second,
			Confine: &sandbox.Room{Writable: []string{room}, Namespaces: ns, MaxProcesses: 50}})
	}()
	other := Run(context.Background(), Spec{Argv: []string{"sh", "-c", count}, Log: otherLog, Timeout: 20 * time.Second,
		Confine: &sandbox.Room{Writable: []string{room}, Namespaces: ns, MaxProcesses: 500}})
	r := <-done
	data, _ := os.ReadFile(floodLog)
	if r.StartErr != nil || strings.Contains(string(data), "started all") || !strings.Contains(string(data), "fork") {
		t.Errorf("the flood: %+v\n%s", r, data)
	}
	if data, _ := os.ReadFile(otherLog); other.StartErr != nil || other.ExitCode != 0 || !strings.Contains(string(data), "started 100") {
		t.Errorf("the command beside it: %+v\n%s", other, data)
	}
}

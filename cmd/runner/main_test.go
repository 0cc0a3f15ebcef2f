package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/runner-cli/runner/e2e"
	"github.com/runner-cli/runner/internal/proc"
	"github.com/runner-cli/runner/internal/sandbox"
)

// TestMain lets the test binary play `runner` and `fakeagent` inside the
// scripts, so the end-to-end tests run the real command line against a
// scripted agent without building anything separately. The end-to-end
// tests that kill runners are in e2e/crash, those of workers on Temporal
// in e2e/workers.
func TestMain(m *testing.M) {
	commands := e2e.Commands() // runner, fakeagent, codex, claude (see agent_*.txt)
	for name, f := range map[string]func(){
		"gen":    func() { os.Exit(gen(os.Args[1:])) },
		"sizeat": func() { os.Exit(sizeAtMost(os.Args[1:])) },
		// Helpers for steering a running runner; see watch_test.go.
		"waitfor":     func() { os.Exit(waitFor(os.Args[1:])) },
		"atomicwrite": func() { os.Exit(atomicWrite(os.Args[1:])) },
		"logged":      func() { os.Exit(logged(os.Args[1:])) },
		// A socket outside the agent's room, and a client; see room_*.txt.
		"listen": func() { os.Exit(listen(os.Args[1:])) },
		"dial":   func() { os.Exit(dial(os.Args[1:])) },
	} {
		commands[name] = f
	}
	testscript.Main(m, commands)
}

// TestScripts runs the end-to-end scripts in testdata/script.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "../../testdata/script",
		RequireExplicitExec: true,
		// No deadline of its own: the scripts are bounded by go test's
		// -timeout (testscript takes t.Deadline), not by a wall clock
		// that a busy machine overruns.
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "landlock":
				abi, _ := sandbox.ABI()
				return abi > 0, nil
			case "process-limit":
				return proc.RoomLayers(100).ProcessLimit != "", nil
			case "namespaces":
				// The agent's room is built in namespaces (as the run
				// probes it, proc.RoomLayers).
				return sandbox.ProbeNamespaces(sandbox.NamespacesUser) == nil ||
					os.Geteuid() == 0 && sandbox.ProbeNamespaces(sandbox.NamespacesRoot) == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			// A script's folder is a repository only when the script makes
			// it one, even where the temporary folder lies inside a git
			// work tree.
			env.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(env.WorkDir))
			// The fake agents keep their state and their scripts' logs in
			// a folder of their own beside the script's, outside every
			// checkout: the one directory their rooms add (SPEC §19), so
			// that agents and guards run confined, as users' runs are (a
			// writable directory holding a checkout would open the room,
			// and one inside it would show as the person's changes).
			// Scripts name it $FAKEAGENT_STATE; one that must run
			// unconfined sets RUNNER_SANDBOX_WRITABLE=$WORK and says why.
			agent := env.WorkDir + ".agent"
			if err := os.MkdirAll(agent, 0o755); err != nil {
				return err
			}
			env.Setenv("RUNNER_SANDBOX_WRITABLE", agent)
			env.Setenv("FAKEAGENT_STATE", agent)
			// A home of the script's own: go, the runner and the tools it
			// starts may write there (go's telemetry, the agents' state),
			// and nothing is left on the machine. Beside the script's
			// folder, which the rooms may write: the agents' CLI
			// configuration in it is the person's, which no room may.
			home := env.WorkDir + ".home"
			if err := os.MkdirAll(home, 0o755); err != nil {
				return err
			}
			env.Setenv("HOME", home)
			// Guards that run `go test` build with the suite's own cache
			// and toolchain: a fresh cache would compile the standard
			// library again, and no toolchain is ever downloaded.
			env.Setenv("GOCACHE", goEnv("GOCACHE"))
			env.Setenv("GOPATH", goEnv("GOPATH"))
			env.Setenv("GOTOOLCHAIN", "local")
			env.Setenv("GOPROXY", "off")
			return nil
		},
	})
}

// gen writes large inputs for the scripts:
//
//	gen tree N FILE          a valid tree whose root has N leaf children
//	gen notes BYTES FILE     a notes file of about BYTES bytes
func gen(args []string) int {
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gen tree N FILE | gen notes BYTES FILE")
		return 2
	}
	n, err := strconv.Atoi(args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var b strings.Builder
	switch args[0] {
	case "tree":
		b.WriteString(`{"version": 1, "root": {"id": "big", "title": "Big tree", "children": [`)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"id": "task-%05d", "title": "Task number %d with a longish title", "goal": "Do step %d."}`, i, i, i)
		}
		b.WriteString("]}}\n")
	case "notes":
		if strings.Contains(args[2], "questions") {
			b.WriteString("# Open Questions\n\n")
		} else {
			b.WriteString("# Assumptions\n\n")
		}
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "- [iteration %d, node task-%05d] assumption number %d about the project\n", i, i, i)
		}
	default:
		fmt.Fprintf(os.Stderr, "gen: unknown kind %q\n", args[0])
		return 2
	}
	if err := os.WriteFile(args[2], []byte(b.String()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// sizeat PATH MAX fails when the file PATH, or any file in the folder
// PATH, is larger than MAX bytes.
func sizeAtMost(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: sizeat PATH MAX")
		return 2
	}
	max, err := strconv.ParseInt(args[1], 10, 64)
	st, serr := os.Stat(args[0])
	if err != nil || serr != nil {
		fmt.Fprintln(os.Stderr, "sizeat:", err, serr)
		return 2
	}
	files := []string{args[0]}
	if st.IsDir() {
		entries, err := os.ReadDir(args[0])
		if err != nil {
			fmt.Fprintln(os.Stderr, "sizeat:", err)
			return 2
		}
		files = files[:0]
		for _, e := range entries {
			files = append(files, filepath.Join(args[0], e.Name()))
		}
	}
	code := 0
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "sizeat:", err)
			return 2
		}
		if st.Size() > max {
			fmt.Fprintf(os.Stderr, "%s is %d bytes, more than %d\n", f, st.Size(), max)
			code = 1
			continue
		}
		fmt.Printf("%s: %d bytes (at most %d)\n", f, st.Size(), max)
	}
	return code
}

// goEnv is a variable of `go env`, read once for all scripts; "" where go
// is not installed (the scripts that need it skip).
func goEnv(name string) string {
	goEnvOnce.Do(func() {
		out, err := exec.Command("go", "env", "-json", "GOCACHE", "GOPATH").Output()
		if err == nil {
			json.Unmarshal(out, &goEnvVars)
		}
	})
	return goEnvVars[name]
}

var (
	goEnvOnce sync.Once
	goEnvVars map[string]string
)

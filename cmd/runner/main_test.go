package main

import (
	"os"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/runner-cli/runner/internal/cli"
	"github.com/runner-cli/runner/internal/fakeagent"
)

// TestMain lets the test binary play `runner` and `fakeagent` inside the
// scripts, so the end-to-end tests run the real command line against a
// scripted agent without building anything separately.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"runner":    func() { os.Exit(cli.Main()) },
		"fakeagent": func() { os.Exit(fakeagent.Main()) },
	})
}

// TestScripts runs the end-to-end scripts in testdata/script.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "../../testdata/script",
		RequireExplicitExec: true,
		Deadline:            time.Now().Add(5 * time.Minute),
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			return nil
		},
	})
}

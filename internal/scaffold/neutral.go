package scaffold

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"time"
)

// neutralCheckedGoal is the goal of the neutral example's second leaf:
// what a check is, without a command that could not run here.
const neutralCheckedGoal = "A task may carry checks of its own (\"checks\": [{\"name\": ..., \"run\": ..., \"report\": ...}]): " +
	"commands that judge this task only, besides the guards, such as the tests of the code it changes. " +
	"A check with a report names the tests that fail, and the next attempt is told which."

// neutralGuardComment is written above the commented-out [[guard]] of a
// repository whose kind was not recognised, without its "# ": which
// guard to write, with a report, for the common kinds.
const neutralGuardComment = `No test command was recognised at the repository's root (no go.mod,
pyproject.toml, setup.py, requirements.txt, tests/test_*.py,
package.json with a test script, Cargo.toml or Makefile with a test
target), so no guard is written: with none, an agent's "done" is
trusted. Write the guard that runs your tests by removing the "# "
before the [[guard]] lines below and setting run (and report, which lets
a suite that fails at the start be the baseline instead of stopping the
run), for example:
  run = "python3 -m unittest discover -v"   report = "unittest"
  run = "python3 -m pytest -q --junitxml=` + ReportDir + `/junit.xml"   report = "junit:` + ReportDir + `/junit.xml"
  run = "go test -json ./..."   report = "go-json"
  run = "node --test --test-reporter=tap"   report = "tap"
  run = "./run-tests.sh"   (no report: judged by its exit status)`

// withoutGuard comments out the example config.toml's first [[guard]]
// table, from its header to the next table, and writes above it which
// guard to write. Its own comments stay as they are.
func withoutGuard(example []byte) ([]byte, error) {
	lines := strings.SplitAfter(string(example), "\n")
	in := false
	done := false
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		eol := line[len(strings.TrimRight(line, "\r\n")):]
		if strings.HasPrefix(trimmed, "[") {
			if in {
				in, done = false, true
				break
			}
			if trimmed == "[[guard]]" && !done {
				in = true
				var b strings.Builder
				for _, c := range wrap(neutralGuardComment, commentWidth) {
					b.WriteString(strings.TrimRight("# "+c, " ") + eol)
				}
				b.WriteString("# " + line)
				lines[i] = b.String()
				continue
			}
		}
		if in && trimmed != "" && !strings.HasPrefix(trimmed, "#") {
			lines[i] = "# " + line
		}
	}
	if !in && !done {
		return nil, errNoGuard
	}
	return []byte(strings.Join(lines, "")), nil
}

// neutralNote says, after init in a repository whose kind was not
// recognised, which guard to write.
const neutralNote = "no guard was written: write the [[guard]] that runs your tests in " + Dir + "/config.toml " +
	"(its comment there shows examples, each with a report), or an agent's \"done\" is trusted"

// pytestInstalled reports whether `python3 -m pytest --version` works in
// root, within a few seconds; tests replace it.
var pytestInstalled = func(string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "python3", "-m", "pytest", "--version")
	cmd.Dir = os.TempDir() // no code of the repository runs
	cmd.WaitDelay = time.Second
	return cmd.Run() == nil
}

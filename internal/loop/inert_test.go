package loop

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/charmbracelet/log"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// What the loop prints comes partly from files the agent can write
// (meta.json, run_state.json, tree.json): its control characters reach
// the terminal escaped.
func TestLoopOutputIsInert(t *testing.T) {
	const hostile = "x\x1b[2J\rALL TESTS PASSED\x1b]52;c;aGk=\a\x00\u202e"
	const escaped = `x\x1b[2J\rALL TESTS PASSED\x1b]52;c;aGk=\a\x00\u202e`
	p := state.NewPaths(t.TempDir())
	var out, logs bytes.Buffer
	l := log.New(&logs)
	l.SetFormatter(log.TextFormatter)
	r := &Runner{p: p, opts: Options{Paths: p, Progress: &out, Notices: &out}, log: l}

	r.progress(&out, &state.Meta{Iteration: 1, NodePath: hostile, AgentStatus: hostile, Guard: hostile, NodeStatus: hostile, DurationMS: 1})
	r.reportInvalid(hostile, []badInput{{p.Tree(), errors.New(hostile + "\nsecond line")}})
	// A node id read back from meta.json when an iteration is resumed.
	meta := &state.Meta{Iteration: 1, Node: hostile, NodePath: hostile}
	r.applyOutcome(&tree.Tree{Version: tree.Version, Root: &tree.Node{ID: "root"}}, meta, new(*executor.Message))

	for what, s := range map[string]string{"progress and notices": out.String(), "logs": logs.String()} {
		if i := strings.IndexFunc(s, func(r rune) bool { return r < 0x20 && r != '\n' || r == 0x202e }); i >= 0 {
			t.Errorf("%s print a raw control character at byte %d:\n%q", what, i, s)
		}
		if !strings.Contains(s, "x\\x1b[2J") {
			t.Errorf("%s do not show the hostile text escaped:\n%s", what, s)
		}
	}
	if !strings.Contains(out.String(), escaped) || !strings.Contains(out.String(), "  second line\n") {
		t.Errorf("the output does not keep the escaped text and the error's lines:\n%s", out.String())
	}
}

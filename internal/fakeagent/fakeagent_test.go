package fakeagent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeScript(t *testing.T, dir, script string) string {
	t.Helper()
	p := filepath.Join(dir, "script.json")
	if err := os.WriteFile(p, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadRefusesBadScripts(t *testing.T) {
	tests := []struct{ name, script, want string }{
		{"unknown field", `{"steps":[{"nod":"a"}]}`, `unknown field "nod"`},
		{"bad sleep", `{"steps":[{"sleep":"soon"}]}`, "sleep"},
		{"bad deliver", `{"default":{"deliver":"pigeon"}}`, "deliver"},
		{"bad stdin", `{"default":{"stdin":"later"}}`, "stdin"},
		{"duplicate key", `{"steps":[],"steps":[]}`, "duplicate key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(writeScript(t, t.TempDir(), tt.script))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Load error = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestMatch(t *testing.T) {
	sc := &Script{
		Steps: []Step{
			{Node: "a", Attempt: 1, Stdout: "a1"},
			{Node: "a", Stdout: "a-any"},
			{Attempt: 2, Stdout: "any-2"},
		},
		Default: &Step{Stdout: "default"},
	}
	tests := []struct {
		node    string
		attempt int
		want    string
	}{
		{"a", 1, "a1"},
		{"a", 2, "a-any"},
		{"b", 2, "any-2"},
		{"b", 1, "default"},
	}
	for _, tt := range tests {
		if got := sc.Match(tt.node, tt.attempt); got == nil || got.Stdout != tt.want {
			t.Errorf("Match(%q, %d) = %+v, want step %q", tt.node, tt.attempt, got, tt.want)
		}
	}
	if got := (&Script{}).Match("a", 1); got != nil {
		t.Errorf("Match without steps or default = %+v, want nil", got)
	}
}

func TestRunCountsAttemptsAndActs(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	script := writeScript(t, dir, `{
	  "steps": [
	    {"node": "n1", "attempt": 1, "save_prompt": "seen.md", "save_args": "args.txt",
	     "write": [{"path": "sub/a.txt", "content": "one\n"}],
	     "env": ["RUNNER_NODE_ID", "FAKEAGENT_NOPE"],
	     "stdout": "hello\n", "filler": 100,
	     "message": {"status": "retry", "summary": "first"}, "exit": 3},
	    {"node": "n1", "attempt": 2,
	     "write": [{"path": "sub/a.txt", "content": "two\n", "append": true}],
	     "delete": ["seen.md"],
	     "message": {"status": "done", "summary": "second"}, "deliver": "stdout"}
	  ]
	}`)
	out := filepath.Join(dir, "last.txt")
	t.Setenv("FAKEAGENT_SCRIPT", script)
	t.Setenv("FAKEAGENT_STATE", "")
	t.Setenv("RUNNER_NODE_ID", "n1")
	t.Setenv("RUNNER_OUTPUT_FILE", out)

	var stdout, stderr bytes.Buffer
	code, err := run([]string{"exec", "-"}, strings.NewReader("the prompt"), &stdout, &stderr)
	if err != nil || code != 3 {
		t.Fatalf("first run = %d, %v; want 3, nil", code, err)
	}
	mustRead := func(p, want string) {
		t.Helper()
		got, err := os.ReadFile(p)
		if err != nil || string(got) != want {
			t.Fatalf("%s = %q, %v; want %q", p, got, err, want)
		}
	}
	mustRead("seen.md", "the prompt")
	mustRead("args.txt", "exec\n-\n")
	mustRead("sub/a.txt", "one\n")
	mustRead(out, `{"status": "retry", "summary": "first"}`+"\n")
	wantOut := "RUNNER_NODE_ID=n1\nFAKEAGENT_NOPE unset\nhello\n"
	if !strings.HasPrefix(stdout.String(), wantOut) || stdout.Len() != len(wantOut)+100 {
		t.Fatalf("stdout = %q, want %q then 100 filler bytes", stdout.String(), wantOut)
	}

	stdout.Reset()
	os.Remove(out)
	code, err = run(nil, strings.NewReader(""), &stdout, &stderr)
	if err != nil || code != 0 {
		t.Fatalf("second run = %d, %v; want 0, nil", code, err)
	}
	mustRead("sub/a.txt", "one\ntwo\n")
	if _, err := os.Stat("seen.md"); !os.IsNotExist(err) {
		t.Errorf("seen.md still exists after the delete step (err %v)", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output file written although the message went to stdout")
	}
	if !strings.Contains(stdout.String(), `{"status": "done", "summary": "second"}`) {
		t.Errorf("stdout = %q, want the message in it", stdout.String())
	}

	// A third invocation matches nothing and there is no default.
	if _, err := run(nil, strings.NewReader(""), &stdout, &stderr); err == nil ||
		!strings.Contains(err.Error(), `no step for node "n1" attempt 3`) {
		t.Errorf("third run error = %v, want no step for attempt 3", err)
	}
}

func TestDeliverClaude(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("FAKEAGENT_SCRIPT", "")
	t.Setenv("FAKEAGENT_STATE", dir)
	t.Setenv("RUNNER_NODE_ID", "x")
	script := writeScript(t, dir, `{"default": {"deliver": "claude", "is_error": true,
		"message": {"status": "done", "summary": "s"}}}`)
	var stdout, stderr bytes.Buffer
	if code, err := run([]string{script}, strings.NewReader(""), &stdout, &stderr); err != nil || code != 0 {
		t.Fatalf("run = %d, %v", code, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "fakeagent.state.json")); err != nil {
		t.Errorf("state file not in FAKEAGENT_STATE: %v", err)
	}
	var last map[string]any
	sc := bufio.NewScanner(&stdout)
	lines := 0
	for sc.Scan() {
		lines++
		last = nil
		if err := json.Unmarshal(sc.Bytes(), &last); err != nil {
			t.Fatalf("event line %d is not JSON: %v", lines, err)
		}
	}
	if lines != 3 || last["type"] != "result" || last["is_error"] != true ||
		!strings.Contains(last["result"].(string), `"summary": "s"`) {
		t.Fatalf("got %d events, last %v; want 3 ending with an is_error result holding the message", lines, last)
	}
}

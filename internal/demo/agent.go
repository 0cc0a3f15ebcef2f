package demo

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// message is the final message the scripted agent writes.
type message struct {
	Status      string   `json:"status"`
	Summary     string   `json:"summary"`
	Assumptions []string `json:"assumptions,omitempty"`
	Questions   []string `json:"questions,omitempty"`
}

// Agent plays the demo's agent for one iteration. Like a real agent it
// reads the prompt on stdin, works in the current directory, reads the
// context files the runner wrote, and ends with a JSON message (written to
// $RUNNER_OUTPUT_FILE and printed).
func Agent(stdin io.Reader, stdout io.Writer) int {
	prompt, _ := io.ReadAll(stdin)
	node := os.Getenv("RUNNER_NODE_ID")
	ctxDir := filepath.Join(os.Getenv("RUNNER_DIR"), "context")
	failure, _ := os.ReadFile(filepath.Join(ctxDir, "failure.md"))
	history, _ := os.ReadFile(filepath.Join(ctxDir, "history.md"))
	fmt.Fprintf(stdout, "demo agent: iteration %s, task %s, prompt of %d bytes\n", os.Getenv("RUNNER_ITERATION"), node, len(prompt))

	var msg message
	var err error
	switch node {
	case "hello":
		if len(failure) == 0 {
			// First attempt: a plausible mistake the guard will catch.
			err = write("hello.txt", "Hello world\n")
			msg = message{Status: "done", Summary: "Created hello.txt with the greeting."}
		} else {
			fmt.Fprintf(stdout, "demo agent: read .runner/context/failure.md:\n%s\n", indent(string(failure)))
			err = write("hello.txt", "Hello, world!\n")
			msg = message{Status: "done", Summary: "failure.md showed check.sh wants exactly 'Hello, world!'; fixed the punctuation in hello.txt.",
				Assumptions: []string{"The greeting is plain ASCII, one line, no trailing spaces."}}
		}
	case "goodbye":
		if len(history) == 0 {
			err = write("goodbye.txt", "Goodbye, and thanks for all the tests.\n")
			msg = message{Status: "retry", Summary: "Wrote the farewell line of goodbye.txt; the signature line is still missing, add it next."}
		} else {
			fmt.Fprintf(stdout, "demo agent: read .runner/context/history.md:\n%s\n", indent(string(history)))
			err = appendTo("goodbye.txt", "-- the runner demo\n")
			msg = message{Status: "done", Summary: "history.md said the signature was missing; appended it to goodbye.txt."}
		}
	case "notes":
		err = write("NOTES.md", "# Notes\n\n- hello.txt: the greeting\n- goodbye.txt: the farewell, signed\n")
		msg = message{Status: "done", Summary: "Described both files in NOTES.md.",
			Questions: []string{"Should NOTES.md also link to the runner documentation?"}}
	default:
		msg = message{Status: "blocked", Summary: fmt.Sprintf("The demo agent has no script for task %q.", node)}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "demo agent: %v\n", err)
		return 1
	}
	data, _ := json.Marshal(msg)
	if out := os.Getenv("RUNNER_OUTPUT_FILE"); out != "" {
		if err := os.WriteFile(out, data, 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "demo agent: %v\n", err)
			return 1
		}
	}
	fmt.Fprintf(stdout, "%s\n", data)
	return 0
}

func write(name, content string) error { return os.WriteFile(name, []byte(content), 0o644) }

func appendTo(name, content string) error {
	f, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func indent(s string) string {
	return "  | " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  | ")
}

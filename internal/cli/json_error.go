package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// jsonError is what a command run with --json prints on stdout when it
// fails before printing its own JSON: outside a repository, on a file
// that does not load, on a bad argument. A script reading stdout always
// gets one JSON object.
type jsonError struct {
	OK       bool   `json:"ok"`
	Error    string `json:"error"`
	ExitCode int    `json:"exit_code"`
}

// jsonArg reports whether the arguments hold --json (the flag is
// parsed later; wantsJSON tells whether it was taken as one).
func jsonArg(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--json" || strings.HasPrefix(a, "--json=") {
			return true
		}
	}
	return false
}

// wantsJSON reports whether cmd was run with --json.
func wantsJSON(cmd *cobra.Command) bool {
	if cmd == nil {
		return false
	}
	f := cmd.Flags().Lookup("json")
	return f != nil && f.Value.String() == "true"
}

// printJSONError prints the error of a --json command as one JSON object.
func printJSONError(w io.Writer, code int, msg string) {
	if msg == "" {
		msg = fmt.Sprintf("exit status %d", code)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(jsonError{Error: msg, ExitCode: code})
}

// countingWriter counts what a command wrote to stdout: one that printed
// its JSON before failing gets no second object.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

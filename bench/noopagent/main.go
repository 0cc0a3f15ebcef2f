// Command noopagent is the no-op agent of the benchmarks in BENCHMARKS.md:
// it reads its standard input (the prompt) to the end and prints a final
// message saying the task is done, without doing anything else.
package main

import (
	"io"
	"os"
)

func main() {
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		os.Exit(1)
	}
	os.Stdout.WriteString(`{"status": "done", "summary": "nothing to do"}` + "\n")
}

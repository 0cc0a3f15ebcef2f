// Command runner drives a coding agent unattended through a task tree.
// See README.md.
package main

import (
	"os"

	"github.com/runner-cli/runner/internal/cli"
)

func main() {
	os.Exit(cli.Main())
}

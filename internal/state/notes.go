package state

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/runner-cli/runner/internal/fsutil"
)

// AppendNotes appends items to a persistent notes file (assumptions.md or
// questions.md), one line each, tagged with the iteration and node so a
// reader knows where each came from. The file gets a heading when created.
func AppendNotes(path, heading string, iteration int, node string, items []string) error {
	var b strings.Builder
	for _, it := range items {
		it = strings.Join(strings.Fields(it), " ")
		if it == "" {
			continue
		}
		fmt.Fprintf(&b, "- [iteration %d, node %s] %s\n", iteration, node, it)
	}
	if b.Len() == 0 {
		return nil
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		if err := fsutil.AppendSync(path, []byte("# "+heading+"\n\n")); err != nil {
			return err
		}
	}
	return fsutil.AppendSync(path, []byte(b.String()))
}

package textfmt

import (
	"fmt"
	"strings"
)

// Head names the first n of names, and how many more there are.
func Head(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

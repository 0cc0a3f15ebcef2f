package cli

import (
	"fmt"
	"io"

	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/outcome"
	"github.com/runner-cli/runner/internal/status"
)

// maxNeedsYou bounds the blocked tasks `runner status` lists one by one.
const maxNeedsYou = 20

// printNeedsYou lists the tasks blocked now: each with its question and
// the exact command to go on.
func printNeedsYou(w io.Writer, rep *status.Report) {
	for i, n := range rep.NeedsYou {
		if i == maxNeedsYou {
			fmt.Fprintf(w, "            … and %d more blocked (`runner report` lists them all)\n", len(rep.NeedsYou)-i)
			return
		}
		head := "needs you:  "
		if i > 0 {
			head = "            "
		}
		q := inert.Line(n.Question)
		if q == "" {
			q = "no reason given"
		}
		if outcome.IsCostCap(n.Question) {
			fmt.Fprintf(w, "%s%s stopped at its spend cap (%s); raise the cap and it reopens, or `%s` gives it its budget again\n", head, inert.Line(n.Path), q, inert.Line(n.Command))
			continue
		}
		if n.Question == outcome.ReasonExhausted {
			fmt.Fprintf(w, "%s%s used up its attempts; fix the cause, then `%s`\n", head, inert.Line(n.Path), inert.Line(n.Command))
			continue
		}
		fmt.Fprintf(w, "%s%s asks: %s\n            answer: `%s`\n", head, inert.Line(n.Path), q, inert.Line(n.Command))
	}
}

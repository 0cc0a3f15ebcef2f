package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/scaffold"
	"github.com/runner-cli/runner/internal/spend"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// validateJSON is what `runner validate --json` prints. Valid is OK's
// older name, kept for the scripts that read it.
type validateJSON struct {
	OK       bool              `json:"ok"`
	Valid    bool              `json:"valid"`
	Tasks    int               `json:"tasks"`
	Problems []validateProblem `json:"problems"`
	Warnings []string          `json:"warnings"`
	Done     int               `json:"done"`
	Checks   int               `json:"checks"`
}

// validateProblem is one problem of `runner validate --json`: the file,
// the place (line and column, 0 when unknown; the node path in
// tree.json; the key in config.toml) and what is wrong. Message is the
// problem alone, without the place.
type validateProblem struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Node    string `json:"node"`
	Key     string `json:"key"`
	Message string `json:"message"`
}

// problemsOf splits an error of config.Load, tree.Load or validate into
// its problems, each with its place.
func problemsOf(err error) []validateProblem {
	var ce *config.Error
	var ve *tree.ValidationError
	switch {
	case errors.As(err, &ce):
		out := make([]validateProblem, 0, len(ce.Problems))
		for _, p := range ce.Problems {
			key := p.Key
			if rest, ok := strings.CutPrefix(p.Msg, "unknown key "); ok && key == "" {
				// The message names the key it does not know.
				if k, err := strconv.QuotedPrefix(rest); err == nil {
					key, _ = strconv.Unquote(k)
				}
			}
			out = append(out, validateProblem{File: p.File, Line: p.Line, Column: p.Column, Key: key, Message: p.Msg})
		}
		return out
	case errors.As(err, &ve):
		out := make([]validateProblem, 0, len(ve.Problems)+1)
		for _, p := range ve.Problems {
			out = append(out, validateProblem{File: p.File, Line: p.Line, Column: p.Col, Node: p.Path, Message: p.Msg})
		}
		if ve.More > 0 {
			out = append(out, validateProblem{File: ve.File, Message: fmt.Sprintf("... and %d more problems", ve.More)})
		}
		if len(out) == 0 {
			out = append(out, validateProblem{File: ve.File, Message: ve.Error()})
		}
		return out
	}
	var ne *spend.NamesError
	if errors.As(err, &ne) {
		var out []validateProblem
		for _, pr := range ne.Problems {
			// "FILE: NODE PATH: what is wrong"
			if f := strings.SplitN(pr, ": ", 3); len(f) == 3 {
				out = append(out, validateProblem{File: f[0], Node: f[1], Message: f[2]})
				continue
			}
			out = append(out, validateProblem{Message: pr})
		}
		return out
	}
	// A file that cannot be read: "path: why" names it.
	msg := err.Error()
	file := ""
	if i := strings.Index(msg, ": "); i > 0 && !strings.Contains(msg[:i], " ") {
		file, msg = msg[:i], msg[i+2:]
	}
	return []validateProblem{{File: file, Message: msg}}
}

// countTasks counts the leaves of a tree.json that does not validate, as
// far as its JSON can be read: 0 when it cannot.
func countTasks(path string) int {
	data, err := fsutil.ReadLimited(path, tree.MaxFileSize, true)
	if err != nil {
		return 0
	}
	type node struct {
		Children []*node `json:"children"`
	}
	var doc struct {
		Root *node `json:"root"`
	}
	if json.Unmarshal(data, &doc) != nil || doc.Root == nil {
		return 0
	}
	var leaves func(n *node) int
	leaves = func(n *node) int {
		if n == nil {
			return 0
		}
		if len(n.Children) == 0 {
			return 1
		}
		k := 0
		for _, c := range n.Children {
			k += leaves(c)
		}
		return k
	}
	return leaves(doc.Root)
}

// warnExample warns while tree.json is, or still holds, an example
// `runner init` wrote: the whole tree, its root, or tasks among a
// person's own.
func warnExample(warn func(format string, args ...any), p state.Paths, t *tree.Tree) {
	if scaffold.IsExample(t) {
		warn("%s is still the example `runner init` wrote: replace it with your project's tasks (or write the documents and run `runner plan`)", rel(p, p.Tree()))
		return
	}
	left := scaffold.ExampleLeftovers(t)
	if len(left) == 0 {
		return
	}
	what := "tasks"
	if len(left) == 1 {
		what = "task"
	}
	if len(left) > 0 && left[0] == t.Root.ID {
		what = "root"
		if len(left) > 1 {
			what = "root and tasks"
		}
	}
	warn("%s still holds the example `runner init` wrote: %s %s; every prompt carries them, so replace them with your own (`runner plan` names the root after your documents)",
		rel(p, p.Tree()), what, strings.Join(left, ", "))
}

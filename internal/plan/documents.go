package plan

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/runner-cli/runner/internal/fsutil"
)

// Document is one document a plan is made from: a PRD, a spec, an issue.
type Document struct {
	// Name is how the prompt and the records name it: its path relative
	// to the repository root, or "stdin".
	Name string
	Text string
}

// Stdin is the argument that reads a document from standard input, and
// the name that document gets.
const (
	StdinArg  = "-"
	StdinName = "stdin"
)

// MaxDocumentSize bounds how much of one document is read. The prompt
// budget bounds what fits much lower; this only keeps a huge file from
// being read whole before the budget says so.
const MaxDocumentSize = 16 << 20

// ReadDocuments reads the documents named by args: files in the
// repository at root, relative to cwd when not absolute, or StdinArg for
// stdin (once). Each must be a regular file of UTF-8 text, not empty. The
// error names every document that cannot be used, and why.
func ReadDocuments(root, cwd string, args []string, stdin io.Reader) ([]Document, error) {
	var docs []Document
	var errs []error
	seen := map[string]bool{}
	for _, arg := range args {
		var d Document
		var err error
		if arg == StdinArg {
			d, err = readStdin(stdin)
		} else {
			d, err = readFile(root, cwd, arg)
		}
		switch {
		case err != nil:
			errs = append(errs, err)
		case seen[d.Name]:
			errs = append(errs, fmt.Errorf("document %s is named twice", d.Name))
		case strings.TrimSpace(d.Text) == "":
			errs = append(errs, fmt.Errorf("document %s is empty", d.Name))
		default:
			docs = append(docs, d)
		}
		if err == nil {
			seen[d.Name] = true
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return docs, nil
}

func readStdin(stdin io.Reader) (Document, error) {
	if stdin == nil {
		return Document{}, errors.New("document -: no standard input")
	}
	data, err := io.ReadAll(io.LimitReader(stdin, MaxDocumentSize+1))
	switch {
	case err != nil:
		return Document{}, fmt.Errorf("document -: read standard input: %w", err)
	case len(data) > MaxDocumentSize:
		return Document{}, fmt.Errorf("document -: standard input holds more than %d MiB; a plan is made from documents that fit the prompt budget", MaxDocumentSize>>20)
	case !utf8.Valid(data):
		return Document{}, errors.New("document -: standard input is not UTF-8 text")
	}
	return Document{Name: StdinName, Text: string(data)}, nil
}

func readFile(root, cwd, arg string) (Document, error) {
	path := arg
	if !filepath.IsAbs(path) {
		path = filepath.Join(cwd, path)
	}
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return Document{}, fmt.Errorf("document %s is outside the repository (%s): plan from files in the repository, or pipe it in: runner plan - < %s",
			arg, root, arg)
	}
	data, err := fsutil.ReadLimited(path, MaxDocumentSize, true)
	if err != nil {
		return Document{}, fmt.Errorf("document %s: %w", arg, err)
	}
	return Document{Name: filepath.ToSlash(rel), Text: string(data)}, nil
}

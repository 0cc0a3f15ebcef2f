package guard

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/runner-cli/runner/internal/testreport"
)

// reading is the reading of one guard's test report: from its stdout
// while it runs (go test -json, TAP), or from the files it wrote once it
// ended (JUnit).
type reading struct {
	format  testreport.Format
	err     error // the report's format could not be read
	root    string
	started time.Time
	w       *io.PipeWriter
	lines   *testreport.LineMerger // stdout and stderr line by line (FromStderr)
	out     io.Writer
	errs    io.Writer
	done    chan struct{}
	report  *testreport.Report
	readErr error
}

// startReport starts reading g's report; a guard without one reads
// nothing.
func startReport(g Spec, root string) *reading {
	rd := &reading{root: root, started: time.Now()}
	rd.format, rd.err = testreport.ParseFormat(g.Report)
	if rd.err != nil || !rd.format.FromStdout() {
		return rd
	}
	r, w := io.Pipe()
	rd.w, rd.done = w, make(chan struct{})
	if rd.format.FromStderr() {
		rd.lines = testreport.NewLineMerger(w)
		rd.out, rd.errs = rd.lines.Stream(), rd.lines.Stream()
	}
	go func() {
		defer close(rd.done)
		rd.report, rd.readErr = testreport.Parse(rd.format, r)
		// Whatever the parser left unread is drained, so that the
		// guard's output is never held up by its report.
		io.Copy(io.Discard, r)
	}()
	return rd
}

// stdout is the writer the guard's stdout is copied to; nil when the
// report is not read from it.
func (rd *reading) stdout() io.Writer {
	switch {
	case rd.w == nil:
		return nil
	case rd.lines != nil:
		return rd.out
	}
	return rd.w
}

// stderr is the writer the guard's stderr is copied to; nil when the
// report is not read from it.
func (rd *reading) stderr() io.Writer {
	if rd.lines == nil {
		return nil
	}
	return rd.errs
}

// finish returns the report once the guard ended: nil, nil without one.
func (rd *reading) finish() (*testreport.Report, error) {
	switch {
	case rd.err != nil:
		return nil, rd.err
	case rd.format.Kind == "":
		return nil, nil
	case rd.w != nil:
		if rd.lines != nil {
			rd.lines.Flush()
		}
		rd.w.Close()
		<-rd.done
		return rd.report, rd.readErr
	}
	return rd.readJUnit()
}

// readJUnit reads the JUnit files the guard wrote. Files that match but
// are older than the guard's start are another run's: with none newer,
// the guard wrote no report.
func (rd *reading) readJUnit() (*testreport.Report, error) {
	matches, err := filepath.Glob(filepath.Join(rd.root, rd.format.Path))
	if err != nil {
		return nil, fmt.Errorf("report %s: %w", rd.format, err)
	}
	fresh := false
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && !st.ModTime().Before(rd.started.Add(-time.Second)) {
			fresh = true
		}
	}
	if !fresh {
		return nil, fmt.Errorf("%w: the guard wrote no file matching %s", testreport.ErrMalformed, rd.format.Path)
	}
	return testreport.ReadJUnit(rd.format, rd.root)
}

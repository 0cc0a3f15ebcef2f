package guard

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"

	"github.com/runner-cli/runner/internal/testreport"
)

// reading is the reading of one guard's test report: from its stdout
// while it runs (go test -json, TAP), or from the files it wrote once it
// ended (JUnit).
type reading struct {
	format  testreport.Format
	err     error // the report's format could not be read
	root    string
	w       *io.PipeWriter
	lines   *testreport.LineMerger // stdout and stderr line by line (FromStderr)
	out     io.Writer
	errs    io.Writer
	done    chan struct{}
	report  *testreport.Report
	readErr error
}

// ErrNoReportWritten is wrapped by the error of a guard whose report is
// files it writes, and that wrote none during its run: it fails.
var ErrNoReportWritten = errors.New("no report written")

// startReport starts reading g's report; a guard without one reads
// nothing. A report the guard writes to files is the guard's only if it
// wrote it during its run: the files matching its path are removed
// before it starts (without following a link out of root); one that
// cannot be removed is an error, and the guard does not run.
func startReport(g Spec, root string) (*reading, error) {
	rd := &reading{root: root}
	rd.format, rd.err = testreport.ParseFormat(g.Report)
	if rd.err != nil || rd.format.Kind == "" {
		return rd, nil
	}
	if !rd.format.FromStdout() {
		return rd, removeReports(root, rd.format.Path)
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
	return rd, nil
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
	rep, err := testreport.ReadJUnit(rd.format, rd.root)
	if errors.Is(err, testreport.ErrNoReport) {
		// Every file matching was removed before the guard started.
		return nil, fmt.Errorf("%w: the guard wrote no file matching %s during its run", ErrNoReportWritten, rd.format.Path)
	}
	return rep, err
}

// removeReports removes the files matching pattern (relative to root,
// slash-separated) inside root, never through a link that leads out of
// it; folders that match are left alone. It returns an error naming a
// file it could not remove.
func removeReports(root, pattern string) error {
	r, err := os.OpenRoot(root)
	if err != nil {
		return fmt.Errorf("remove the old report files %s: %w", pattern, err)
	}
	defer r.Close()
	matches, err := fs.Glob(r.FS(), path.Clean(pattern))
	if err != nil {
		return fmt.Errorf("remove the old report files %s: %w", pattern, err)
	}
	sort.Strings(matches)
	for _, m := range matches {
		st, err := r.Lstat(m)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return fmt.Errorf("remove the old report file %s: %w", m, err)
		}
		if st.IsDir() {
			continue
		}
		if err := r.Remove(m); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove the old report file %s before the guard runs (a report counts only when the guard wrote it): %w", m, err)
		}
	}
	return nil
}

package executor

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/lazyregexp"
	"github.com/runner-cli/runner/internal/proc"
)

// Recover rebuilds, from the files a finished agent run left in r.RunDir,
// the Result that Run would have returned: for a runner that died, or
// failed to write its own records (a full disk), after the agent exited
// and before the iteration's results were saved. Call it once the agent's
// processes are gone. It reads the output file (last_message.txt),
// events.jsonl (codex, claude) and executor.log, each from where the last
// agent run of the iteration starts (after the runner's mark of a later
// run), finds the message in the order of SPEC §5 (the output file, the
// Claude result event, the last JSON object in stdout that is not an
// agent event) and classifies the run from what the files say: a Claude
// result event with is_error or api_error_status 429, Codex turn.failed
// and error events, the lines printed outside the events, a valid
// message.
//
// The exit status is unknown: the Result has Recovered set, ExitCode -1
// with no Signal and Duration 0, and the exit is not counted as a
// failure, so a run that left a valid final message and no failure
// evidence is ok. Recover returns (nil, nil) when the files do not show
// that the agent finished: no valid final message, and no event an agent
// prints as it ends (a Claude result event, a Codex turn.failed). The
// agent then did not finish, and the caller counts an interrupted
// attempt. The error is for files that exist but cannot be read, and for
// Options that do not build a command line.
//
// Its limits follow from what the files keep:
//   - They are bounded (Options.OutputLimit). The last JSON object of
//     stdout and a Claude result event are found only in what is kept of
//     the end of events.jsonl (preset command: of executor.log), and an
//     event line longer than that is lost; the usage, failure events and
//     refused commands are read from the lines kept, so a Codex
//     turn.completed cut out of the middle is missed (Codex prints its
//     running total in the last one, which is kept).
//   - With the codex and claude presets, stdout lines that do not start
//     with "{" are in executor.log and are not searched for the message;
//     with preset command, stdout and stderr share executor.log, and both
//     are searched.
//   - A file the runner could not finish writing holds only its head, so
//     the end of the run may be missing from it.
//   - A timeout, an idle stop or a kill by a signal cannot be told from an
//     agent that ended by itself.
//   - The agent can write these files too: a line it prints on stderr
//     (preset command: anywhere) that looks like the runner's mark of a
//     later run moves where the reading of executor.log starts.
//   - LogBytes and CutBytes are what the files and their cut markers say.
func Recover(o Options, r Request) (*Result, error) {
	argv, err := BuildArgv(o, Placeholders{
		PromptFile: r.PromptFile, OutputFile: OutputFile(r.RunDir), SchemaFile: r.SchemaFile,
		Iteration: r.Iteration, Node: r.NodeID,
	})
	if err != nil {
		return nil, err
	}
	res, err := recoverRun(o, r.RunDir, argv)
	if err != nil {
		return nil, fmt.Errorf("recover the agent run in %s: %w", r.RunDir, err)
	}
	return res, nil
}

func recoverRun(o Options, runDir string, argv []string) (*Result, error) {
	outData, readErr := fsutil.ReadLimited(OutputFile(runDir), outputFileMax, true)
	split := splitsStdout(o.Preset)
	logPath := filepath.Join(runDir, LogFileName)
	log, err := openPart(logPath, split)
	if err != nil {
		return nil, err
	}
	defer log.close()
	stdout := log
	if split {
		if stdout, err = openPart(filepath.Join(runDir, EventsFileName), false); err != nil {
			return nil, err
		}
		defer stdout.close()
	}

	stream := newEventStream()
	var cuts cutCounter
	cuts.split = lineSplitter{max: 80, fn: cuts.line}
	if err := stdout.copyTo(io.MultiWriter(stream, &cuts.split)); err != nil {
		return nil, err
	}
	stream.Close()
	cuts.split.Close()
	if split {
		if err := log.copyTo(&cuts.split); err != nil {
			return nil, err
		}
		cuts.split.Close()
	}
	tail, err := stdout.tail(stdoutTailSize)
	if err != nil {
		return nil, err
	}
	view := stdoutView{tail: tail, tailStart: stdout.size() - int64(len(tail)), stream: stream}

	received := stdout.size()
	if split {
		received += log.size()
	}
	res := &Result{
		Argv: argv, ExitCode: -1, Recovered: true,
		LogBytes: received - cuts.markerBytes + cuts.cut, CutBytes: cuts.cut,
	}
	// The exit record, when the agent's reaper wrote one, tells how it
	// ended: stopped (by a timeout, a cancel or the runner's death), it
	// did not finish; otherwise its exit status counts as Run's would.
	pr := proc.Result{}
	exited := false
	if ex, err := proc.ReadExitRecord(filepath.Join(runDir, ExitFileName)); err == nil {
		if ex.Stopped {
			return nil, nil
		}
		exited = true
		pr.ExitCode, pr.Signal, pr.Duration = ex.Code, ex.Signal, time.Duration(ex.TookMS)*time.Millisecond
		res.ExitCode, res.Signal, res.Duration = pr.ExitCode, pr.Signal, pr.Duration
	}
	f, cx := conclude(o, pr, res, outData, readErr, view, logWindow(logPath, log.start))
	if !exited && res.Message == nil && f.claude == nil && cx.FailureEvent != "turn.failed" {
		return nil, nil
	}
	return res, nil
}

// LogTail returns the last lines the last agent run of an iteration left
// in runDir's executor.log, as Result.LogTail has them (for the codex and
// claude presets, the lines that are not JSON, without the runner's own
// first line), for an iteration whose agent did not finish; "" when there
// are none or the file cannot be read.
func LogTail(o Options, runDir string) string {
	log, err := openPart(filepath.Join(runDir, LogFileName), splitsStdout(o.Preset))
	if err != nil {
		return ""
	}
	log.close()
	return logTailOf(o.Preset, logWindow(filepath.Join(runDir, LogFileName), log.start))
}

// filePart is the part of a run file that the last agent run of the
// iteration wrote; f is nil when the file does not exist.
type filePart struct {
	f          *os.File
	start, end int64
}

// openPart opens a run file and finds where the last agent run's output
// starts in it: after the last mark of a later run, else at the start
// (after the first line saying where the events are, with note).
func openPart(path string, note bool) (*filePart, error) {
	f, err := openRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &filePart{}, nil
	}
	if err != nil {
		return nil, err
	}
	p := &filePart{f: f}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	p.end = st.Size()
	if p.start, err = lastMarkEnd(f, p.end); err != nil {
		f.Close()
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if p.start == 0 && note {
		head := make([]byte, len(eventsNote))
		if n, _ := f.ReadAt(head, 0); n == len(head) && string(head) == eventsNote {
			p.start = int64(n)
		}
	}
	return p, nil
}

func (p *filePart) close() {
	if p.f != nil {
		p.f.Close()
	}
}

func (p *filePart) size() int64 { return p.end - p.start }

// copyTo writes the part to w.
func (p *filePart) copyTo(w io.Writer) error {
	if p.f == nil {
		return nil
	}
	_, err := io.Copy(w, io.NewSectionReader(p.f, p.start, p.size()))
	return err
}

// tail returns the last n bytes of the part (fewer when it is shorter).
func (p *filePart) tail(n int64) ([]byte, error) {
	if p.f == nil {
		return nil, nil
	}
	buf := make([]byte, min(n, p.size()))
	if _, err := p.f.ReadAt(buf, p.end-int64(len(buf))); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf, nil
}

// lastMarkEnd returns the offset just past the last mark line of a later
// agent run in the first size bytes of f, or 0 when there is none. It
// reads backwards in blocks.
func lastMarkEnd(f *os.File, size int64) (int64, error) {
	const block = 64 << 10
	mark := []byte(retryMarkPrefix)
	buf := make([]byte, block+len(mark))
	for end := size; end > 0; {
		start := max(0, end-block)
		chunk := buf[:min(end+int64(len(mark)), size)-start]
		if _, err := f.ReadAt(chunk, start); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if i := bytes.LastIndex(chunk, mark); i >= 0 {
			at := start + int64(i) + 1 // the mark line starts after its newline
			return lineEnd(f, at, size)
		}
		end = start
	}
	return 0, nil
}

// lineEnd returns the offset just past the newline that ends the line
// starting at from (size when the line has no newline).
func lineEnd(f *os.File, from, size int64) (int64, error) {
	buf := make([]byte, 256)
	for off := from; off < size; off += int64(len(buf)) {
		n, err := f.ReadAt(buf, off)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return off + int64(i) + 1, nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if n == 0 {
			break
		}
	}
	return size, nil
}

// cutCounter adds up the cut markers among the lines written to its
// splitter.
type cutCounter struct {
	split       lineSplitter
	cut         int64
	markerBytes int64
}

var cutMarkerLine = lazyregexp.New(`^\[runner: (\d+) bytes of output cut here\]$`)

func (c *cutCounter) line(line []byte, _ int64) {
	if m := cutMarkerLine.FindSubmatch(line); m != nil {
		n, _ := strconv.ParseInt(string(m[1]), 10, 64)
		c.cut += n
		c.markerBytes += int64(len(line)) + 1
	}
}

// openRegular opens a file for reading, refusing anything but a regular
// file without blocking on it (a FIFO put in place of a run file), and a
// symbolic link under .runner/ (fsutil.Open).
func openRegular(path string) (*os.File, error) {
	return fsutil.Open(path)
}

// RunBegan reports whether the retry-th agent run of an iteration (0: the
// first) began: its output files are opened, executor.log created or a
// later run's mark line appended to it, just before the agent is started.
// A runner that died earlier, during a wait between two runs say, started
// no agent.
func RunBegan(runDir string, retry, iteration int) bool {
	path := filepath.Join(runDir, LogFileName)
	if retry == 0 {
		_, err := os.Lstat(path)
		return err == nil
	}
	data, err := fsutil.ReadLimited(path, 1<<30, false)
	return err == nil && bytes.Contains(data, retryMark(retry, iteration))
}

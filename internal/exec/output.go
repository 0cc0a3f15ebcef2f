package executor

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/runner-cli/runner/internal/proc"
)

// eventsNote is the first line of executor.log for the codex and claude
// presets, whose stdout goes to events.jsonl.
const eventsNote = "[runner: the agent's JSON events (its stdout lines that start with \"{\") are in " +
	EventsFileName + "; this log holds its stderr and its other stdout lines]\n"

// retryMarkPrefix starts the line written before the output of a later
// agent run of the same iteration, in executor.log and events.jsonl.
const retryMarkPrefix = "\n--- runner: agent run "

func retryMark(retry, iteration int) []byte {
	return fmt.Appendf(nil, "%s%d of iteration %d, after a usage or rate limit ---\n", retryMarkPrefix, retry+1, iteration)
}

// splitsStdout reports whether a preset's stdout is a JSON event stream
// kept in events.jsonl, apart from executor.log.
func splitsStdout(preset string) bool {
	return preset == PresetCodex || preset == PresetClaude
}

// runOutput receives the output of one agent run: executor.log and, for
// the codex and claude presets, events.jsonl, each within
// Options.OutputLimit; the end of stdout in memory; and the event stream
// reading every stdout line.
type runOutput struct {
	log    *proc.BoundedFile
	events *proc.BoundedFile // nil for preset command
	tail   *proc.TailBuffer
	stream *eventStream

	stdout, stderr io.Writer // for proc.Spec
}

// openOutput creates the output files of an agent run (a later run of the
// iteration appends to them, after a line saying so). With the codex and
// claude presets, stdout lines that start with "{" go to events.jsonl and
// every other line, stderr included, to executor.log, which starts with a
// line saying so; with preset command, executor.log takes everything.
// Each file, earlier runs included, stays within OutputLimit.
func openOutput(o Options, r Request) (*runOutput, error) {
	var mark []byte
	if r.Retry > 0 {
		mark = retryMark(r.Retry, r.Iteration)
	}
	logPrefix := mark
	if splitsStdout(o.Preset) && r.Retry == 0 {
		logPrefix = []byte(eventsNote)
	}
	opt := proc.BoundedOptions{Limit: o.OutputLimit, Append: r.Retry > 0, WholeFile: true, Prefix: logPrefix}
	log, err := proc.OpenBounded(filepath.Join(r.RunDir, LogFileName), opt)
	if err != nil {
		return nil, err
	}
	out := &runOutput{log: log, tail: proc.NewTailBuffer(stdoutTailSize), stream: newEventStream(), stderr: log}
	files := io.Writer(log)
	if splitsStdout(o.Preset) {
		opt.Prefix, opt.Lines = mark, true
		out.events, err = proc.OpenBounded(filepath.Join(r.RunDir, EventsFileName), opt)
		if err != nil {
			log.Close()
			return nil, err
		}
		files = &lineRouter{json: out.events, other: log}
	}
	out.stdout = &stdoutSink{tail: out.tail, stream: out.stream, files: files}
	return out, nil
}

// close finishes the files and returns the bytes their limits cut and the
// first error writing them.
func (o *runOutput) close() (cut int64, err error) {
	o.stream.Close()
	_, cut, err = o.log.Close()
	if o.events != nil {
		_, c, e := o.events.Close()
		cut += c
		err = errors.Join(err, e)
	}
	return cut, err
}

// view returns what the message lookup reads of stdout.
func (o *runOutput) view() stdoutView {
	tail := o.tail.Bytes()
	return stdoutView{tail: tail, tailStart: o.tail.Total() - int64(len(tail)), stream: o.stream}
}

// stdoutSink hands every byte of stdout to the in-memory tail, the event
// stream and the files. It never fails: the files keep their errors for
// close.
type stdoutSink struct {
	tail, stream, files io.Writer
}

func (s *stdoutSink) Write(p []byte) (int, error) {
	s.tail.Write(p)
	s.stream.Write(p)
	s.files.Write(p)
	return len(p), nil
}

// lineRouter sends each line of what is written to it, whole, to json if
// its first byte is '{' and to other otherwise; consecutive lines going to
// the same writer are written together.
type lineRouter struct {
	json, other io.Writer
	mid         bool // inside a line
	toJSON      bool // where the current line goes
}

func (r *lineRouter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if !r.mid {
			r.toJSON, r.mid = p[0] == '{', true
		}
		// Take lines while they go to the same writer.
		end, dest := 0, r.toJSON
		for end < len(p) {
			i := bytes.IndexByte(p[end:], '\n')
			if i < 0 {
				end = len(p)
				break
			}
			end += i + 1
			r.mid = false
			if end < len(p) && (p[end] == '{') != dest {
				break
			}
			if end < len(p) {
				r.mid = true
			}
		}
		w := r.other
		if dest {
			w = r.json
		}
		w.Write(p[:end])
		p = p[end:]
	}
	return n, nil
}

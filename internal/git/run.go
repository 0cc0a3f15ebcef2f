package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/fsutil"
)

// DefaultTimeout bounds each git call when Options.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// Limits of what a git call may print: stderr is kept up to stderrLimit
// bytes for the error; stdout, read into memory, up to outputLimit (the
// list of changes of a tree of a million files fits).
const (
	stderrLimit = 8 << 10
	outputLimit = 256 << 20
)

// killAfter is the time between the SIGTERM that stops a git call (git
// removes its lock files on SIGTERM) and the SIGKILL to its process group;
// waitDelay bounds the wait for its pipes once it is gone.
const (
	killAfter = time.Second
	waitDelay = 2 * time.Second
)

// ErrTimeout is matched (errors.Is) by the *Error of a call that ran out
// of time.
var ErrTimeout = errors.New("git call timed out")

// Error is a git call that failed: it did not start, exited with a status
// other than 0, or ran out of time.
type Error struct {
	Args     []string      // the arguments given to git (after the -c options of every call)
	Dir      string        // where it ran
	ExitCode int           // its exit status, -1 when it was killed or never ran
	Stderr   string        // what it printed on stderr, trimmed, at most 8 KiB
	Timeout  time.Duration // the time limit it ran out of, or 0
	Err      error         // the cause: *exec.ExitError, context.DeadlineExceeded, context.Canceled...
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("git")
	n := 0
	for _, a := range e.Args {
		if n > 512 {
			b.WriteString(" ...")
			break
		}
		q := quoteArg(a)
		n += len(q)
		b.WriteByte(' ')
		b.WriteString(q)
	}
	switch {
	case e.Timeout > 0:
		fmt.Fprintf(&b, ": timed out after %s", e.Timeout)
	case e.ExitCode >= 0:
		fmt.Fprintf(&b, ": exit status %d", e.ExitCode)
	case e.Err != nil:
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if e.Stderr != "" {
		b.WriteString(": ")
		b.WriteString(e.Stderr)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrTimeout) true for a call that timed out.
func (e *Error) Is(target error) bool { return target == ErrTimeout && e.Timeout > 0 }

// quoteArg quotes an argument for an error message when it is empty or
// holds spaces, quotes or control characters.
func quoteArg(a string) string {
	if a == "" || strings.ContainsFunc(a, func(r rune) bool { return r <= ' ' || r == '"' || r == '\'' || r == 0x7f }) {
		return strconv.Quote(a)
	}
	return a
}

// exe is how the package runs git: the program, the environment every
// call starts from, and the time limit of one call.
type exe struct {
	path    string
	env     []string
	timeout time.Duration
	version [2]int // major, minor

	// trace, when set (by benchmarks), is told each call's arguments and
	// duration.
	trace func(args []string, took time.Duration)
}

// call is what one git invocation needs besides its arguments.
type call struct {
	dir    string    // working directory
	env    []string  // added to the base environment (a later value wins)
	config []string  // -c options after globalArgs (not in Error.Args)
	stdin  []byte    // nil: no input
	stdout io.Writer // set: stdout goes there instead of into result.out
	ok     []int     // exit statuses other than 0 that are not failures
	// timeout, when set, replaces the repository's bound for this call.
	timeout time.Duration
}

// result is the outcome of a call that did not fail.
type result struct {
	out    []byte // stdout, unless call.stdout was set
	code   int    // exit status: 0 or one of call.ok
	stderr string // what it printed on stderr, trimmed, at most stderrLimit bytes
}

// subcommand is the git subcommand of args, past the -c options.
func subcommand(args []string) string {
	for i := 0; i < len(args); i++ {
		if args[i] == "-c" {
			i++
			continue
		}
		if !strings.HasPrefix(args[i], "-") {
			return args[i]
		}
	}
	return ""
}

// run runs git with args and returns its output, or an *Error.
func (x *exe) run(ctx context.Context, c call, args ...string) (result, error) {
	limit := x.timeout
	if c.timeout > 0 {
		limit = c.timeout
	}
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	argv := make([]string, 0, len(globalArgs)+len(c.config)+len(args))
	argv = append(append(append(argv, globalArgs...), c.config...), args...)
	cmd := exec.CommandContext(cctx, x.path, argv...)
	cmd.Dir = c.dir
	cmd.Env = x.env
	if len(c.env) > 0 {
		cmd.Env = append(slices.Clip(x.env), c.env...)
	}
	if c.stdin != nil {
		cmd.Stdin = bytes.NewReader(c.stdin)
	}
	out := &limitedBuffer{limit: outputLimit}
	if c.stdout != nil {
		cmd.Stdout = c.stdout
	} else {
		cmd.Stdout = out
	}
	stderr := &headBuffer{limit: stderrLimit}
	cmd.Stderr = stderr
	stop := inOwnGroup(cmd)
	cmd.WaitDelay = waitDelay

	start := time.Now()
	err := cmd.Start()
	if err == nil {
		fsutil.FailAt(fsutil.FailGitCmd, subcommand(args))
		err = cmd.Wait()
	}
	stop()
	if x.trace != nil {
		x.trace(args, time.Since(start))
	}
	fail := func(code int, cause error) (result, error) {
		return result{}, &Error{Args: args, Dir: c.dir, ExitCode: code, Stderr: strings.TrimSpace(stderr.String()), Err: cause}
	}
	if cctx.Err() != nil && ctx.Err() == nil {
		// The time limit, not the caller, stopped it.
		_, e := fail(-1, context.DeadlineExceeded)
		e.(*Error).Timeout = limit
		return result{}, e
	}
	if ctx.Err() != nil {
		return fail(-1, ctx.Err())
	}
	if out.over {
		return fail(-1, fmt.Errorf("output larger than %d bytes", outputLimit))
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return result{out: out.Bytes()}, nil
	case errors.As(err, &ee):
		code := ee.ExitCode()
		if code > 0 && slices.Contains(c.ok, code) {
			return result{out: out.Bytes(), code: code, stderr: strings.TrimSpace(stderr.String())}, nil
		}
		return fail(code, err)
	default:
		return fail(-1, err)
	}
}

// limitedBuffer keeps what is written up to limit bytes; past it, writes
// fail, which stops the copying from the pipe (git then gets EPIPE).
type limitedBuffer struct {
	bytes.Buffer
	limit int
	over  bool
}

var errOutputLimit = errors.New("output limit reached")

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.limit {
		b.over = true
		n, _ := b.Buffer.Write(p[:b.limit-b.Len()])
		return n, errOutputLimit
	}
	return b.Buffer.Write(p)
}

// truncatedMark ends a stderr cut at its limit.
const truncatedMark = " [...]"

// headBuffer keeps the first limit bytes written and drops the rest (git
// prints the reason of a failure first).
type headBuffer struct {
	bytes.Buffer
	limit int
	cut   bool
}

func (b *headBuffer) Write(p []byte) (int, error) {
	if room := b.limit - b.Len(); room < len(p) {
		b.Buffer.Write(p[:max(room, 0)])
		b.cut = true
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

func (b *headBuffer) String() string {
	if b.cut {
		return b.Buffer.String() + truncatedMark
	}
	return b.Buffer.String()
}

// lines splits output into its lines, without the final newline.
func lines(out []byte) []string {
	s := strings.TrimSuffix(string(out), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

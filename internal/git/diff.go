package git

import (
	"bytes"
	"context"
	"errors"
)

// DefaultDiffLimit bounds DiffStat's output, and Diff's when its limit is
// zero or less.
const DefaultDiffLimit = 256 << 10

// DiffStat returns `git diff --stat` between a and b (commits or trees),
// for a person: what files changed and by how many lines, renames found,
// paths quoted as git quotes them. With a "", b is a commit and the stat
// is what it changed from its first parent (from nothing for a root
// commit). The output is bounded (DefaultDiffLimit).
func (r *Repo) DiffStat(ctx context.Context, a, b string) (string, error) {
	text, _, err := r.diff(ctx, a, b, DefaultDiffLimit, "--stat=100", "--summary")
	return text, err
}

// Diff returns the patch from a to b (as DiffStat reads them), at most
// limit bytes of it (DefaultDiffLimit when limit <= 0), cut at the end
// of a line; truncated says it was cut. Git stops as soon as the limit is
// reached. Binary files show as "Binary files differ"; no external diff
// or text conversion program runs.
func (r *Repo) Diff(ctx context.Context, a, b string, limit int) (text string, truncated bool, err error) {
	if limit <= 0 {
		limit = DefaultDiffLimit
	}
	return r.diff(ctx, a, b, limit, "-p")
}

func (r *Repo) diff(ctx context.Context, a, b string, limit int, format ...string) (string, bool, error) {
	if err := checkRev(b); err != nil {
		return "", false, err
	}
	args := append([]string{"diff-tree", "-r", "-M", "--no-color", "--no-ext-diff", "--no-textconv"}, format...)
	if a == "" {
		args = append(args, "--root", "--no-commit-id", b)
	} else {
		if err := checkRev(a); err != nil {
			return "", false, err
		}
		args = append(args, a, b)
	}
	w := &capWriter{limit: limit}
	_, err := r.git(ctx, call{stdout: w}, append(args, "--")...)
	if w.full && err != nil && !errors.Is(err, ErrTimeout) && ctx.Err() == nil {
		err = nil // git stopped because its output was cut (SIGPIPE)
	}
	if err != nil {
		return "", false, err
	}
	out := w.buf.Bytes()
	if w.full {
		if i := bytes.LastIndexByte(out, '\n'); i >= 0 {
			out = out[:i+1]
		}
	}
	return string(out), w.full, nil
}

// capWriter keeps the first limit bytes written; the write that goes past
// them fails, so that the copy from git's stdout stops and git with it.
type capWriter struct {
	buf   bytes.Buffer
	limit int
	full  bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	room := w.limit - w.buf.Len()
	if len(p) > room {
		w.buf.Write(p[:room])
		w.full = true
		return room, errOutputLimit
	}
	return w.buf.Write(p)
}

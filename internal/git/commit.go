package git

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/runner-cli/runner/internal/lazyregexp"
)

// ErrNoChange: the tree to commit is the parent's own; no commit is made
// for work that changed nothing.
var ErrNoChange = errors.New("nothing changed")

// The trailers of the runner's commits.
const (
	TrailerNode      = "Runner-Node"
	TrailerIteration = "Runner-Iteration"
)

// Trailer is a "Key: value" line at the end of a commit message, which
// `git log --format='%(trailers:key=Key,valueonly)'` reads.
type Trailer struct{ Key, Value string }

// NodeTrailers are the trailers of a task's commit: its node and its
// iteration.
func NodeTrailers(node string, iteration int) []Trailer {
	return []Trailer{{TrailerNode, node}, {TrailerIteration, strconv.Itoa(iteration)}}
}

// Message is a commit message.
type Message struct {
	Subject  string // one line; newlines become spaces
	Body     string // free text, may be empty
	Trailers []Trailer
}

var trailerKey = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9-]*$`)

// String formats the message as git stores it: the subject, a blank line,
// the body, a blank line and the trailers, one per line, as the last
// paragraph (so that git finds them, and only them, as the trailers).
// Control characters other than newlines and tabs are removed (an agent's
// summary may carry terminal escapes; git log prints messages raw), and
// lines lose their trailing spaces.
func (m Message) String() string {
	var b strings.Builder
	b.WriteString(oneLine(m.Subject))
	b.WriteByte('\n')
	if body := cleanBody(m.Body); body != "" {
		b.WriteString("\n")
		b.WriteString(body)
		b.WriteByte('\n')
	}
	if len(m.Trailers) > 0 {
		b.WriteByte('\n')
		for _, t := range m.Trailers {
			b.WriteString(t.Key)
			b.WriteString(": ")
			b.WriteString(oneLine(t.Value))
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// check refuses a message git would store differently from what it says:
// an empty subject, a malformed trailer key, an empty trailer value.
func (m Message) check() error {
	if oneLine(m.Subject) == "" {
		return errors.New("commit message: empty subject")
	}
	for _, t := range m.Trailers {
		if !trailerKey.MatchString(t.Key) {
			return fmt.Errorf("commit message: invalid trailer key %q", t.Key)
		}
		if oneLine(t.Value) == "" {
			return fmt.Errorf("commit message: empty value for trailer %s", t.Key)
		}
	}
	return nil
}

// oneLine is s on one line: control characters and runs of white space
// become one space; the ends are trimmed.
func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
}

// cleanBody is s without control characters (but newlines and tabs),
// CRLF line ends, trailing spaces, and leading or trailing blank lines.
func cleanBody(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return -1
		}
		return r
	}, s)
	ls := strings.Split(s, "\n")
	for i, l := range ls {
		ls[i] = strings.TrimRightFunc(l, unicode.IsSpace)
	}
	return strings.Trim(strings.Join(ls, "\n"), "\n")
}

// Commit makes a commit of tree on parent (git commit-tree) and returns
// it; no ref moves (UpdateRef does that). The error is ErrNoChange when
// tree is parent's own tree. With parent "", the commit is a root commit.
// The author and committer are the repository's identity, or the fallback
// one (see Identity). The commit is never signed: a signing program could
// wait for a passphrase nobody types.
func (r *Repo) Commit(ctx context.Context, tree, parent string, m Message) (string, error) {
	if err := m.check(); err != nil {
		return "", err
	}
	if err := checkRev(tree); err != nil {
		return "", err
	}
	if parent != "" {
		ptree, err := r.TreeOf(ctx, parent)
		if err != nil {
			return "", fmt.Errorf("commit on %s: %w", parent, err)
		}
		if ptree == tree {
			return "", ErrNoChange
		}
	}
	return r.commitTree(ctx, tree, parent, m)
}

// CommitSnapshot is Commit of snap's tree on its base, which it is known
// to differ from where snap has Paths (ErrNoChange when it has none):
// one git call, where Commit needs two.
func (r *Repo) CommitSnapshot(ctx context.Context, snap Snapshot, m Message) (string, error) {
	if err := m.check(); err != nil {
		return "", err
	}
	if len(snap.Paths) == 0 {
		return "", ErrNoChange
	}
	return r.commitTree(ctx, snap.Tree, snap.Base, m)
}

// commitTree is `git commit-tree` of tree on parent (none when ""), with
// the repository's identity, never signed.
func (r *Repo) commitTree(ctx context.Context, tree, parent string, m Message) (string, error) {
	args := []string{"commit-tree", "--no-gpg-sign", tree}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	env, _, err := r.identity(ctx)
	if err != nil {
		return "", err
	}
	res, err := r.git(ctx, call{env: env, stdin: []byte(m.String())}, append(args, "-F", "-")...)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(res.out)), nil
}

// AdvanceHead moves the working tree's HEAD (the branch checked out, or
// HEAD itself when detached) from old to commit, compare-and-swap as
// UpdateRef, and brings its index along, for a commit made of snap, the
// last Snapshot of this same working tree: the files already hold the
// commit's content, and stay as they are. Without it, a commit made on
// the branch checked out would leave the index behind, and the next
// Changes would list the committed files as changed.
//
// The snapshot's temporary index, which holds exactly the commit's tree
// with the files' current stats, becomes the working tree's index (under
// git's index.lock); when that cannot be done (the index changed since
// the snapshot, a later Snapshot was taken, a git command holds the
// lock), the snapshot's Paths are taken from the files into the index
// with `git update-index` instead. The index is done first: a crash
// between the two steps leaves the work staged on the old HEAD, which a
// new snapshot and commit finish, never a HEAD ahead of its index. When
// HEAD is not at old (ErrRefChanged), the index is set all the same; it
// matches the files.
func (r *Repo) AdvanceHead(ctx context.Context, snap Snapshot, commit, old string) error {
	installed := false
	if r.takePending(snap.index) {
		installed = r.install(snap.index)
		if !installed {
			snap.index.remove()
		}
	}
	if !installed {
		if err := r.updateIndex(ctx, snap.Paths); err != nil {
			return fmt.Errorf("advance HEAD of %s: %w", r.top, err)
		}
	}
	return r.UpdateRef(ctx, "HEAD", commit, old)
}

// FindByTrailers returns the most recent of the last max commits of rev
// (a branch, a ref) whose trailers include every key and value of want
// (keys compared as git does, ignoring case), or "" when none does. One
// git log reads them. After a crash, it tells whether a task's commit was
// already made.
func (r *Repo) FindByTrailers(ctx context.Context, rev string, max int, want map[string]string) (string, error) {
	if err := checkRev(rev); err != nil {
		return "", err
	}
	if max <= 0 {
		return "", nil
	}
	out, err := r.output(ctx, "log", "-z", "--no-show-signature", "-n", strconv.Itoa(max),
		"--format=%H%n%(trailers:only,unfold)", rev, "--")
	if err != nil {
		return "", err
	}
	for _, rec := range strings.Split(string(out), "\x00") {
		id, trailers, _ := strings.Cut(strings.TrimLeft(rec, "\n"), "\n")
		if id == "" {
			continue
		}
		if matchTrailers(parseTrailers(trailers), want) {
			return id, nil
		}
	}
	return "", nil
}

// Trailers returns the trailers of a commit, in order.
func (r *Repo) Trailers(ctx context.Context, commit string) ([]Trailer, error) {
	if err := checkRev(commit); err != nil {
		return nil, err
	}
	out, err := r.output(ctx, "log", "-1", "--no-show-signature", "--format=%(trailers:only,unfold)", commit, "--")
	if err != nil {
		return nil, err
	}
	return parseTrailers(string(out)), nil
}

func parseTrailers(s string) []Trailer {
	var ts []Trailer
	for _, l := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			ts = append(ts, Trailer{Key: strings.TrimSpace(k), Value: strings.TrimSpace(v)})
		}
	}
	return ts
}

func matchTrailers(have []Trailer, want map[string]string) bool {
	for k, v := range want {
		found := false
		for _, t := range have {
			if strings.EqualFold(t.Key, k) && t.Value == oneLine(v) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

package git

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// CheckIntegrate says whether git can integrate (Integrate needs `git
// merge-tree --write-tree` and `cat-file --batch -z`, git 2.38): nil when
// it can, otherwise an error naming the version found and the one needed.
// Parallel tasks (SPEC.md §14) need it; checkpoints alone do not.
func (r *Repo) CheckIntegrate() error {
	if r.x.atLeast(MinVersionParallel[0], MinVersionParallel[1]) {
		return nil
	}
	return fmt.Errorf("parallel tasks need git 2.38 or later (git merge-tree --write-tree); %s is version %d.%d: install a newer git, or run one task at a time",
		r.x.path, r.x.version[0], r.x.version[1])
}

// Integrate brings a task's commit onto the run branch: the changes task
// made on its parent (the checkpoint its slot started from) replayed as
// one commit on top of onto (the run branch's head, which other tasks may
// have moved since), with onto as its only parent and m as its message.
// The history stays linear: no merge commit is made. Neither a working
// tree nor an index is read or written, and no ref moves: the caller runs
// the guards on the result and moves the run branch (UpdateRef, from
// onto).
//
// When onto is task's parent, there is nothing to replay: task itself is
// returned, and m is not used. Otherwise `git merge-tree --write-tree onto
// task` merges the two in git's object store. Its merge base is task's
// parent whenever that parent is an ancestor of onto, as the run branch's
// linear history makes it; git 2.40 and later are given the parent as the
// merge base (--merge-base), which makes the replay a cherry-pick wherever
// onto is, while with older git a parent that is not an ancestor of onto
// is an error rather than a merge of histories. A clean merge's tree is
// committed with Commit.
//
// The error is a *ConflictError (matching ErrConflict) when the task's
// changes conflict with those made since its parent; ErrNoChange when
// onto already holds all of them (the task's commit was integrated
// before, or another task made the same change); ErrNotFound for an
// unknown onto or task; an error when task has not exactly one parent;
// otherwise git's own error (*Error).
func (r *Repo) Integrate(ctx context.Context, onto, task string, m Message) (string, error) {
	if err := r.CheckIntegrate(); err != nil {
		return "", err
	}
	ontoID, ontoTree, taskID, parent, err := r.replayIDs(ctx, onto, task)
	if err != nil {
		return "", fmt.Errorf("replay %s onto %s: %w", task, onto, err)
	}
	if parent == ontoID {
		return taskID, nil
	}
	if err := m.check(); err != nil {
		return "", err
	}
	args := []string{"merge-tree", "--write-tree", "-z", "--name-only"}
	if r.x.atLeast(2, 40) {
		args = append(args, "--merge-base="+parent)
	} else if ok, err := r.isAncestor(ctx, parent, ontoID); err != nil {
		return "", fmt.Errorf("replay %s onto %s: %w", task, onto, err)
	} else if !ok {
		return "", fmt.Errorf("replay %s onto %s: the task's parent %s is not an ancestor of %s: git %d.%d replays a task only onto a commit that descends from the one it started from (git 2.40 can do more); start the task again from %s",
			task, onto, parent, ontoID, r.x.version[0], r.x.version[1], ontoID)
	}
	args = append(args, ontoID, taskID)
	mt, conflicted, err := r.mergeTree(ctx, args)
	if err != nil {
		return "", err
	}
	if conflicted {
		return "", r.conflictError(ctx, ontoID, taskID, mt)
	}
	if mt.tree == ontoTree {
		return "", fmt.Errorf("replay %s onto %s: %w: %s already holds all of the task's changes", task, onto, ErrNoChange, ontoID)
	}
	c, err := r.commitTree(ctx, mt.tree, ontoID, m)
	if err != nil {
		return "", fmt.Errorf("replay %s onto %s: %w", task, onto, err)
	}
	return c, nil
}

// replayIDs resolves onto and task to commits and finds onto's tree and
// task's parent, in one git call; when that fails, each is resolved on
// its own for an error that names the one that does not exist.
func (r *Repo) replayIDs(ctx context.Context, onto, task string) (ontoID, ontoTree, taskID, parent string, err error) {
	if err := checkRev(onto); err != nil {
		return "", "", "", "", err
	}
	if err := checkRev(task); err != nil {
		return "", "", "", "", err
	}
	out, err := r.output(ctx, "rev-parse", onto+"^{commit}", onto+"^{tree}", task+"^{commit}", task+"^@", "--")
	if err != nil {
		for _, rev := range []string{onto, task} {
			if _, rerr := r.ResolveCommit(ctx, rev); rerr != nil {
				return "", "", "", "", rerr
			}
		}
		return "", "", "", "", err
	}
	l := lines(out)
	if len(l) < 4 || l[len(l)-1] != "--" {
		return "", "", "", "", fmt.Errorf("unexpected output of git rev-parse: %q", out)
	}
	if n := len(l) - 4; n != 1 {
		return "", "", "", "", fmt.Errorf("task commit %s has %d parents; a task's commit has exactly one, the checkpoint it started from", l[2], n)
	}
	return l[0], l[1], l[2], l[3], nil
}

// isAncestor reports whether commit a is an ancestor of commit b (or b
// itself).
func (r *Repo) isAncestor(ctx context.Context, a, b string) (bool, error) {
	res, err := r.git(ctx, call{ok: []int{1}}, "merge-base", "--is-ancestor", a, b)
	return err == nil && res.code == 0, err
}

// mergeTree is what `git merge-tree --write-tree -z --name-only` wrote.
type mergeTree struct {
	tree  string         // the merged tree; with conflicts, holding them
	files []string       // the conflicted paths, sorted, each once
	msgs  []mergeMessage // git's informational messages (with conflicts)
}

// mergeMessage is one of merge-tree's informational messages.
type mergeMessage struct {
	paths []string
	kind  string // a stable short description: "CONFLICT (contents)", "Auto-merging"...
	text  string // the message for people, on one or more lines
}

// mergeTree runs git merge-tree with args (--write-tree -z --name-only
// and the commits) and reads its output; conflicted says it found
// conflicts. Exit status 1 is a conflict, but also what merge-tree says
// of an argument it cannot merge: the output tells them apart.
func (r *Repo) mergeTree(ctx context.Context, args []string) (mt mergeTree, conflicted bool, err error) {
	res, err := r.git(ctx, call{ok: []int{1}}, args...)
	if err != nil {
		return mergeTree{}, false, err
	}
	mt, perr := parseMergeTree(res.out, res.code == 1)
	if perr != nil {
		return mergeTree{}, false, &Error{Args: args, Dir: r.top, ExitCode: res.code, Stderr: res.stderr, Err: perr}
	}
	return mt, res.code == 1, nil
}

// parseMergeTree reads merge-tree's -z output: the tree NUL, and with
// conflicts the conflicted paths, each NUL, an empty field, then the
// messages, each "<count> NUL <path> NUL ... <kind> NUL <text> NUL".
func parseMergeTree(out []byte, conflicted bool) (mergeTree, error) {
	f := strings.Split(string(out), "\x00")
	if len(f) < 2 || !isObjectID(f[0]) {
		return mergeTree{}, fmt.Errorf("no tree in the output of git merge-tree: %q", clipQuote(out))
	}
	mt := mergeTree{tree: f[0]}
	if !conflicted {
		return mt, nil
	}
	i := 1
	for ; i < len(f) && f[i] != ""; i++ {
		mt.files = append(mt.files, f[i])
	}
	if len(mt.files) == 0 {
		return mergeTree{}, fmt.Errorf("git merge-tree reported conflicts without a conflicted path: %q", clipQuote(out))
	}
	slices.Sort(mt.files)
	mt.files = slices.Compact(mt.files)
	for i++; i < len(f) && f[i] != ""; {
		n, err := strconv.Atoi(f[i])
		if err != nil || n < 0 || i+n+2 >= len(f) {
			return mergeTree{}, fmt.Errorf("unexpected message in the output of git merge-tree at %q", clipQuote([]byte(strings.Join(f[i:], "\x00"))))
		}
		mt.msgs = append(mt.msgs, mergeMessage{
			paths: f[i+1 : i+1+n],
			kind:  f[i+1+n],
			text:  strings.TrimRight(f[i+2+n], "\n"),
		})
		i += n + 3
	}
	return mt, nil
}

// clipQuote is the start of out, for an error message.
func clipQuote(out []byte) string {
	const max = 200
	if len(out) > max {
		return string(out[:max]) + "..."
	}
	return string(out)
}

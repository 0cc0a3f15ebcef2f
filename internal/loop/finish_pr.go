package loop

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"os/exec"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/report"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// ghTimeout bounds `gh pr create`.
const ghTimeout = 2 * time.Minute

// finishPR pushes the run branch to git.remote and opens a pull request
// of it into the base with `gh pr create` when gh is installed (the
// tree's root title as its title, the morning report in Markdown as its
// body); without gh it says where to open one.
func (r *Runner) finishPR(ctx context.Context, f *finishing, fin *state.Finished, out io.Writer) error {
	// The push runs with the runner's own git configuration, not the
	// repository's: a remote's name is sent to its URL.
	remote := r.cfg.Git.Remote
	where, err := f.repo.RemoteURL(ctx, remote)
	if err != nil || where == "" {
		where = remote // a URL or a path
	}
	ref := git.BranchRef(f.branch)
	if err := f.repo.Push(ctx, where, ref+":"+ref); err != nil {
		return fmt.Errorf("finish: push the run branch %s: %w", inert.Line(f.branch), err)
	}
	fmt.Fprintf(out, "pushed %s to %s\n", inert.Line(f.branch), inert.Line(remote))
	gh, err := exec.LookPath("gh")
	if err != nil {
		fin.How = state.FinishedPushed
		fin.URL = compareURL(where, f.base, f.branch)
		into := ""
		if f.base != "" {
			into = " into " + inert.Line(f.base)
		}
		if fin.URL != "" {
			fmt.Fprintf(out, "gh is not installed: open the pull request of %s%s at %s\n", inert.Line(f.branch), into, fin.URL)
		} else {
			fmt.Fprintf(out, "gh is not installed: open a pull request of %s%s on %s\n", inert.Line(f.branch), into, inert.Line(where))
		}
		return nil
	}
	body, title, err := r.prText()
	if err != nil {
		return fmt.Errorf("finish: the pull request's text: %w", err)
	}
	args := []string{"pr", "create", "--head", f.branch, "--title", title, "--body-file", "-"}
	if f.base != "" {
		args = append(args, "--base", f.base)
	}
	gctx, cancel := context.WithTimeout(ctx, ghTimeout)
	defer cancel()
	cmd := exec.CommandContext(gctx, gh, args...)
	cmd.Dir = f.repo.Top()
	cmd.Stdin = strings.NewReader(body)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("finish: %s is pushed, but `gh pr create` failed (%w): %s; open the pull request by hand, then `runner finish --abandon` removes the worktrees",
			inert.Line(f.branch), err, inert.Line(lastLine(stderr.String())))
	}
	fin.How, fin.URL = state.FinishedPR, lastLine(stdout.String())
	fmt.Fprintf(out, "opened a pull request: %s\n", inert.Line(fin.URL))
	return nil
}

// prText is the pull request's body, the morning report in Markdown, and
// its title, the tree root's.
func (r *Runner) prText() (body, title string, err error) {
	t, err := tree.Load(r.p.Tree())
	if err != nil {
		return "", "", err
	}
	title = t.Root.Title
	if title == "" {
		title = t.Root.ID
	}
	since, err := report.ParseSince("", time.Now())
	if err != nil {
		return "", "", err
	}
	rep, err := report.Load(r.p, since)
	if err != nil {
		return "", "", err
	}
	var b bytes.Buffer
	if err := report.WriteText(&b, rep); err != nil {
		return "", "", err
	}
	return b.String(), title, nil
}

// compareURL is where GitHub opens a pull request of branch into base
// for the remote at where; "" for a remote elsewhere.
func compareURL(where, base, branch string) string {
	var path string
	switch {
	case strings.HasPrefix(where, "git@github.com:"):
		path = strings.TrimPrefix(where, "git@github.com:")
	default:
		u, err := url.Parse(where)
		if err != nil || u.Host != "github.com" {
			return ""
		}
		path = strings.TrimPrefix(u.Path, "/")
	}
	path = strings.TrimSuffix(path, ".git")
	if strings.Count(path, "/") != 1 {
		return ""
	}
	if base == "" {
		return "https://github.com/" + path + "/pull/new/" + branch
	}
	return "https://github.com/" + path + "/compare/" + base + "..." + branch + "?expand=1"
}

// lastLine is the last line of s that is not blank.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

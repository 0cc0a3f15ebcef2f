package offtree_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/offtree"
)

// Sizes of the benchmark's repository: tracked files, and an ignored
// node_modules of a mid-sized JavaScript project.
const (
	benchTracked     = 10000
	benchNodeModules = 50000
	benchPerFolder   = 20
)

// benchRepo makes (once per benchmark) a repository of benchTracked
// committed files and an ignored node_modules of benchNodeModules files,
// benchPerFolder to a folder, and returns its top and the time after
// which a file is new.
func benchRepo(b *testing.B) (string, *git.Repo, time.Time) {
	b.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed")
	}
	top := b.TempDir()
	env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+b.TempDir(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(top))
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = top, env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(rel string) {
		p := filepath.Join(top, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(rel), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	run("init", "-q", "-b", "main")
	write(".gitignore")
	os.WriteFile(filepath.Join(top, ".gitignore"), []byte("node_modules/\n*.log\n"), 0o644)
	for i := range benchTracked {
		write(fmt.Sprintf("src/d%d/f%d.js", i/benchPerFolder, i))
	}
	run("add", "-A")
	run("-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-qm", "the project")
	for i := range benchNodeModules {
		write(fmt.Sprintf("node_modules/p%d/lib/f%d.js", i/benchPerFolder, i))
	}
	repo, err := git.Open(context.Background(), top, git.Options{Env: env})
	if err != nil {
		b.Fatal(err)
	}
	// The work starts now: what is there is there before. The marker is
	// made again until the file clock ticked past the last file written.
	last, _ := os.Lstat(filepath.Join(top, fmt.Sprintf("node_modules/p%d/lib/f%d.js", (benchNodeModules-1)/benchPerFolder, benchNodeModules-1)))
	marker := filepath.Join(b.TempDir(), "since")
	for {
		os.Remove(marker)
		os.WriteFile(marker, nil, 0o644)
		st, _ := os.Lstat(marker)
		if since := offtree.ChangeTime(st); since.After(offtree.ChangeTime(last)) {
			return top, repo, since
		}
	}
}

// BenchmarkOutside measures git's part alone: listing what is outside
// the judged tree (ignored folders once, repositories of their own).
func BenchmarkOutside(b *testing.B) {
	_, repo, _ := benchRepo(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := repo.Outside(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHideOffTree measures what the guards of an iteration pay to
// be kept to the judged tree: git lists what is outside it, the ignored
// trees are looked at file by file, what the work made there is moved
// aside and put back after. "nothing-new": the agent added nothing
// outside the tree; "new-package": it installed a package of 500 files
// into node_modules and left a log.
func BenchmarkHideOffTree(b *testing.B) {
	for _, made := range []int{0, 500} {
		name := "nothing-new"
		if made > 0 {
			name = "new-package"
		}
		b.Run(name, func(b *testing.B) {
			top, repo, since := benchRepo(b)
			for i := range made {
				p := filepath.Join(top, "node_modules", "leftpad", "lib", strconv.Itoa(i)+".js")
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, nil, 0o644)
			}
			if made > 0 {
				os.WriteFile(filepath.Join(top, "agent.log"), nil, 0o644)
			}
			hide := filepath.Join(b.TempDir(), "hidden")
			b.ResetTimer()
			for b.Loop() {
				roots, err := repo.Outside(context.Background(), nil)
				if err != nil {
					b.Fatal(err)
				}
				res, err := offtree.Hide(top, roots, since, hide)
				if err != nil {
					b.Fatal(err)
				}
				if made > 0 && len(res.Moved) != 2 || res.Files < benchNodeModules {
					b.Fatalf("moved %q after looking at %d files", res.Moved, res.Files)
				}
				if _, err := offtree.Restore(top, hide); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

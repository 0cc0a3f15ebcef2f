package room

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/sandbox"
	"github.com/runner-cli/runner/internal/state"
)

// The temporary directories of a run's rooms are outside the repository,
// named after it so that two runners never share one: one an iteration
// (also its programs' TMPDIR), one for each git.setup.

// Room is what iteration n's agent, guards and reviewer may write,
// working in work: the working tree, a temporary directory of its own
// (also their TMPDIR), their tools' state and caches, and [sandbox]
// writable. nil when they are not confined.
func (p *Policy) Room(cfg *config.Config, n int, work string) (*sandbox.Room, string, error) {
	if !p.Confined(work) {
		return nil, "", nil
	}
	tmp := p.TempDir(n)
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return nil, "", fmt.Errorf("the agent's temporary directory: %w", err)
	}
	return For(cfg, work, tmp), tmp, nil
}

// Setup is the room git.setup runs in, in the worktree at work of slot
// (0: the run's own): the room of an agent working there, with a
// temporary directory of its own; nil where agents run unconfined. done
// removes the directory.
func (p *Policy) Setup(cfg *config.Config, work string, slot int) (room *sandbox.Room, done func()) {
	if len(cfg.Git.Setup) == 0 {
		return nil, func() {}
	}
	tmp := filepath.Join(os.TempDir(), fmt.Sprintf("runner-%s-setup-%d", p.repoSum(), slot))
	done = func() { fsutil.RemoveAll(tmp) }
	if room = For(cfg, work, tmp); room == nil {
		return nil, func() {}
	}
	// Without it the setup cannot write a temporary file, which its own
	// error says.
	os.MkdirAll(tmp, 0o700)
	return room, done
}

// repoSum names the repository in the temporary directories, so that
// two runners never share one.
func (p *Policy) repoSum() string {
	sum := sha256.Sum256([]byte(p.root))
	return hex.EncodeToString(sum[:6])
}

// TempDir is iteration n's temporary directory, outside the repository.
func (p *Policy) TempDir(n int) string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("runner-%s-%d", p.repoSum(), n))
}

// RemoveTempDir removes iteration n's temporary directory once it is
// recorded.
func (p *Policy) RemoveTempDir(n int) {
	fsutil.RemoveAll(p.TempDir(n))
}

// RemoveStale removes, at the start of a run, the temporary directories
// of this repository's iterations that are not in flight (flights): those
// of iterations set aside, or whose runner was killed and whose record a
// later runner made.
func (p *Policy) RemoveStale(flights []*state.InFlight) {
	inFlight := map[int]bool{}
	for _, f := range flights {
		inFlight[f.Iteration] = true
	}
	prefix := strings.TrimSuffix(p.TempDir(0), "0")
	matches, _ := filepath.Glob(prefix + "*")
	for _, m := range matches {
		rest := strings.TrimPrefix(m, prefix)
		// A git.setup's (Setup), left by a runner that was killed.
		_, setup := strings.CutPrefix(rest, "setup-")
		if n, err := strconv.Atoi(rest); setup || err == nil && !inFlight[n] {
			fsutil.RemoveAll(m)
		}
	}
}

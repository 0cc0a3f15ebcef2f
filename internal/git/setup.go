package git

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/proc"
	"github.com/runner-cli/runner/internal/sandbox"
)

// DefaultSetupTimeout bounds each setup command when RunSetup is given no
// timeout.
const DefaultSetupTimeout = 30 * time.Minute

// SetupLogLimit bounds what one setup command leaves in the log: its
// first and last bytes are kept, with a line saying how much was cut.
const SetupLogLimit = 4 << 20

// setupMark is the file, in a worktree's own git dir, that records which
// setup commands ran to the end there. It goes when the worktree goes,
// and an agent working in the worktree's files never reaches it.
const setupMark = "runner-setup"

// RunSetup runs the setup commands of the working tree (`npm ci`, ...)
// once: each with `sh -c` in its top folder, one after the other, until
// one fails. Their output goes to logPath (appended, each after a "$
// command" line; at most SetupLogLimit per command). Once all succeeded,
// a mark in the worktree's git dir records them, and later calls with the
// same commands do nothing (ran is false); a setup that failed, or was
// interrupted by a crash, runs again from the first command next time.
// Each command is stopped (its whole process group) after timeout
// (DefaultSetupTimeout when zero). The error names the command that
// failed and the log.
//
// The commands are the person's, but they run code the agents wrote and
// landed (a package.json's scripts): with room set, each runs confined
// to it as an agent is (package sandbox), with its temporary directory,
// room.Writable[1] (see sandbox.ToolRoom), as TMPDIR. A setup that must
// write elsewhere names the place in sandbox.writable. The log says
// whether the commands were confined.
func (r *Repo) RunSetup(ctx context.Context, cmds []string, logPath string, timeout time.Duration, room *sandbox.Room) (ran bool, err error) {
	if len(cmds) == 0 {
		return false, nil
	}
	if timeout <= 0 {
		timeout = DefaultSetupTimeout
	}
	mark := filepath.Join(r.gitDir, setupMark)
	sum := sha256.Sum256([]byte(strings.Join(cmds, "\x00")))
	want := hex.EncodeToString(sum[:]) + "\n"
	if have, err := os.ReadFile(mark); err == nil && string(have) == want {
		return false, nil
	}
	os.Remove(mark)
	env := setupEnv(r.opts.Env)
	where := "# not confined\n"
	if room != nil {
		where = "# confined to the worktree, its temporary directory and the build tools' caches\n"
		if len(room.Writable) > 1 {
			env = append(slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") }), "TMPDIR="+room.Writable[1])
		}
	}
	if err := fsutil.AppendSync(logPath, []byte(where)); err != nil {
		return true, fmt.Errorf("setup of %s: %w", r.top, err)
	}
	for _, c := range cmds {
		if err := fsutil.AppendSync(logPath, []byte("$ "+c+"\n")); err != nil {
			return true, fmt.Errorf("setup of %s: %w", r.top, err)
		}
		res := proc.Run(ctx, proc.Spec{
			Argv:      []string{"sh", "-c", c},
			Dir:       r.top,
			Env:       env,
			Log:       logPath,
			LogAppend: true,
			LogLimit:  SetupLogLimit,
			Timeout:   timeout,
			Confine:   room,
		})
		var why string
		switch {
		case res.StartErr != nil:
			why = res.StartErr.Error()
		case res.TimedOut:
			why = fmt.Sprintf("timed out after %s", timeout)
		case res.Canceled:
			why = "interrupted"
		case res.Signal != "":
			why = "killed by " + res.Signal
		case res.ExitCode != 0:
			why = fmt.Sprintf("exit status %d", res.ExitCode)
		}
		if why != "" {
			fsutil.AppendSync(logPath, []byte("# "+why+"\n"))
			return true, fmt.Errorf("setup of %s: %q: %s (output in %s)", r.top, c, why, logPath)
		}
	}
	if err := os.WriteFile(mark, []byte(want), 0o644); err != nil {
		return true, fmt.Errorf("setup of %s: record it: %w", r.top, err)
	}
	return true, nil
}

// setupEnv is the environment of the Repo's git calls before it is
// cleaned (Options.Env, or the runner's), without what would point a git
// command of the setup at another repository, index or working tree, and
// without the runner's secrets (sandbox.SecretVars).
func setupEnv(from []string) []string {
	if from == nil {
		from = os.Environ()
	}
	var env []string
	for _, kv := range sandbox.WithoutSecrets(from) {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
			"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_PREFIX":
			continue
		}
		env = append(env, kv)
	}
	return env
}

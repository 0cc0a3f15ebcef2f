package engine

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/runner-cli/runner/internal/sandbox"
)

// KeyEnv names the engine's key file on this machine; it wins over
// engine.key_file (a path of this machine's, where the config is shared).
// No program of a room gets it (sandbox.SecretVars).
const KeyEnv = sandbox.EngineKeyVar

// MinKeyLen is the shortest key accepted, in bytes (after surrounding
// white space is trimmed): 32 random bytes in base64 are 44.
const MinKeyLen = 32

// MakeKeyHint says how to make a key file.
const MakeKeyHint = "make one with `umask 077; head -c 32 /dev/urandom | base64 > ~/.config/runner/engine.key` and give the same file to the coordinator and every worker"

// KeyPath is the key file this machine uses: KeyEnv when set, else
// configured (engine.key_file, or runner worker's --key-file), "~/"
// expanded; "" when neither names one.
func KeyPath(configured string) (string, error) {
	p := configured
	if env := os.Getenv(KeyEnv); env != "" {
		p = env
	}
	if p == "" {
		return "", nil
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("the engine key file %s: %w", p, err)
		}
		p = filepath.Join(home, rest)
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("the engine key file %q is a relative path: give an absolute one, or one starting with \"~/\"", p)
	}
	return filepath.Clean(p), nil
}

// ReadKey reads the engine key this machine names (KeyEnv, else
// configured, the config's engine.key_file); nil when neither does. The
// file may lie neither in the repository at repo ("" when none) nor in a
// directory of writable, where an agent's room may write
// (CheckKeyPlace); the rooms this process makes are told to hide it
// (sandbox.Hide).
func ReadKey(configured, repo string, writable []string) (Key, error) {
	path, err := KeyPath(configured)
	if err != nil || path == "" {
		return nil, err
	}
	if err := CheckKeyPlace(path, repo, writable); err != nil {
		return nil, err
	}
	key, err := LoadKey(path)
	if err != nil {
		return nil, err
	}
	sandbox.Hide(path)
	return key, nil
}

// LoadKey reads the key in the file at path: a regular file (a link to
// one counts: a Kubernetes Secret mounted as a file is one) that other
// users cannot read, holding at least MinKeyLen bytes besides surrounding
// white space.
func LoadKey(path string) (Key, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("the engine key file: %w; %s", err, MakeKeyHint)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("the engine key file %s is not a regular file", path)
	}
	if st.Mode().Perm()&0o007 != 0 {
		return nil, fmt.Errorf("the engine key file %s can be read or written by other users (mode %s): `chmod 600 %s` (in Kubernetes, mount the Secret with defaultMode: 0400)",
			path, st.Mode().Perm(), path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("the engine key file: %w", err)
	}
	key := bytes.TrimSpace(data)
	if len(key) < MinKeyLen {
		return nil, fmt.Errorf("the engine key file %s holds %d bytes, fewer than %d: %s", path, len(key), MinKeyLen, MakeKeyHint)
	}
	return Key(key), nil
}

// Within reports whether path is dir or lies under it.
func Within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// Overlap returns the first of dirs that holds dir or lies in it; "" when
// none does.
func Overlap(dir string, dirs []string) string {
	for _, d := range dirs {
		if d != "" && (Within(dir, d) || Within(d, dir)) {
			return d
		}
	}
	return ""
}

// CheckKeyPlace refuses a key file that an agent could read or replace
// whatever its room: inside the repository it works on (repo, "" when
// none), or inside a directory its room may write.
func CheckKeyPlace(path, repo string, writable []string) error {
	if repo != "" && Within(path, repo) {
		return fmt.Errorf("the engine key file %s is inside the repository %s, which the agents read and may commit: keep it outside (%s)", path, repo, MakeKeyHint)
	}
	for _, d := range writable {
		if d != "" && Within(path, d) {
			return fmt.Errorf("the engine key file %s is inside %s, which every agent's room may write: keep it elsewhere (%s)", path, d, MakeKeyHint)
		}
	}
	return nil
}

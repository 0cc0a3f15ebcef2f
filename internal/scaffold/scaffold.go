// Package scaffold implements `runner init`: it creates the .runner/ layout
// in a repository from the example embedded in the binary, with the
// executor preset the user asked for and the guard and example tree of
// the kind of project it recognises (Go, Python, Node, Rust, Make), and
// never overwrites a file that differs from the example unless forced.
package scaffold

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	runner "github.com/runner-cli/runner"
	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/fsutil"
)

// Dir is the folder runner keeps its files in, relative to the repository
// root.
const Dir = ".runner"

// Dirs are the empty folders Init creates inside Dir.
var Dirs = []string{"context", "state", "runs"}

// Options says where and how to initialise.
type Options struct {
	// Root is the repository root; .runner/ is created inside it.
	Root string
	// Preset is the executor preset written into config.toml: "codex",
	// "claude" or "command"; "" keeps the example's (codex).
	Preset string
	// Force overwrites files that exist with different content.
	Force bool
	// Project is the kind of project config.toml's guard and tree.json
	// are written for; nil detects it in Root (see Detect).
	Project *Project
}

// Result lists what Init did, as paths relative to Root. Folders end in a
// slash.
type Result struct {
	// Created were missing and have been written.
	Created []string
	// Overwritten existed with different content and were replaced (Force).
	Overwritten []string
	// Kept already existed: files with exactly the content Init would
	// write, and folders.
	Kept []string
}

// ExistsError is returned, with nothing written, when files exist with
// content different from the example and Force is not set.
type ExistsError struct {
	// Paths are relative to Root.
	Paths []string
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("init: would overwrite %s (different from the example); use --force to overwrite", strings.Join(e.Paths, ", "))
}

// file is one file Init writes.
type file struct {
	rel  string // relative to Root
	data []byte
}

// Init creates Root/.runner/ with config.toml, tree.json and .gitignore
// from the embedded example and the empty folders context/, state/ and
// runs/. config.toml's guard and tree.json fit the kind of project
// (opts.Project, or what Detect recognises in Root); when nothing is
// recognised they are the embedded example's. Existing files with the
// same content are kept. When an existing file differs, Init writes
// nothing and returns an *ExistsError unless opts.Force is set, in which
// case the file is replaced. Every file is written atomically.
func Init(opts Options) (Result, error) {
	var res Result
	project := opts.Project
	if project == nil {
		p := Detect(opts.Root)
		project = &p
	}
	files, err := exampleFiles(opts.Preset, *project)
	if err != nil {
		return res, err
	}
	info, err := os.Stat(opts.Root)
	if err != nil {
		return res, fmt.Errorf("init: repository root: %w", err)
	}
	if !info.IsDir() {
		return res, fmt.Errorf("init: repository root %s is not a folder", opts.Root)
	}

	// Plan everything before touching the disk, so a refusal writes nothing.
	if err := checkDir(opts.Root, Dir); err != nil {
		return res, err
	}
	for _, d := range Dirs {
		if err := checkDir(opts.Root, filepath.Join(Dir, d)); err != nil {
			return res, err
		}
	}
	var toWrite []file
	var conflicts []string
	for _, f := range files {
		state, err := compare(filepath.Join(opts.Root, f.rel), f.data)
		if err != nil {
			return res, fmt.Errorf("init: %s: %w", f.rel, err)
		}
		switch state {
		case missing:
			toWrite = append(toWrite, f)
			res.Created = append(res.Created, f.rel)
		case same:
			res.Kept = append(res.Kept, f.rel)
		case different:
			conflicts = append(conflicts, f.rel)
			toWrite = append(toWrite, f)
			res.Overwritten = append(res.Overwritten, f.rel)
		}
	}
	if len(conflicts) > 0 && !opts.Force {
		return Result{}, &ExistsError{Paths: conflicts}
	}

	for _, d := range append([]string{Dir}, prefixed(Dir, Dirs)...) {
		created, err := mkdir(opts.Root, d)
		if err != nil {
			return res, err
		}
		if d == Dir {
			// From here on nothing under .runner/ follows a symbolic link.
			dir := filepath.Join(opts.Root, Dir)
			if err := fsutil.Confine(dir); err != nil {
				return res, fmt.Errorf("init: %w", err)
			}
			defer fsutil.Release(dir)
			continue
		}
		if created {
			res.Created = append(res.Created, d+"/")
		} else {
			res.Kept = append(res.Kept, d+"/")
		}
	}
	for _, f := range toWrite {
		if err := fsutil.WriteFileAtomic(filepath.Join(opts.Root, f.rel), f.data, 0o644); err != nil {
			return res, fmt.Errorf("init: %w", err)
		}
	}
	sort.Strings(res.Created)
	sort.Strings(res.Kept)
	sort.Strings(res.Overwritten)
	return res, nil
}

func prefixed(dir string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = filepath.Join(dir, n)
	}
	return out
}

// checkDir fails when rel exists but is not a folder; a symbolic link to
// one is refused too, since the runner does not follow links under
// .runner/.
func checkDir(root, rel string) error {
	p := filepath.Join(root, rel)
	info, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("init: %s: %w", rel, err)
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("init: %w", &fsutil.LinkError{Path: p, Link: p})
	}
	if !info.IsDir() {
		return fmt.Errorf("init: %s exists but is not a folder; move it away and run init again", rel)
	}
	return nil
}

// mkdir creates root/rel and reports whether it was missing. A new folder
// is made durable by syncing its parent.
func mkdir(root, rel string) (bool, error) {
	p := filepath.Join(root, rel)
	err := fsutil.Mkdir(p, 0o755)
	if errors.Is(err, fs.ErrExist) {
		return false, checkDir(root, rel)
	}
	if err != nil {
		return false, fmt.Errorf("init: create %s: %w", rel, err)
	}
	if err := fsutil.SyncDir(filepath.Dir(p)); err != nil {
		return true, fmt.Errorf("init: %w", err)
	}
	return true, nil
}

type fileState int

const (
	missing fileState = iota
	same
	different
)

// compare tells whether path is missing, holds exactly want, or differs.
func compare(path string, want []byte) (fileState, error) {
	info, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return missing, nil
	}
	if err != nil {
		return 0, err
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		// A symbolic link is a file in the way, never followed: with
		// --force it is replaced by the file itself.
		return different, nil
	}
	if info.IsDir() {
		return 0, errors.New("exists but is a folder; move it away and run init again")
	}
	if info.Size() != int64(len(want)) {
		return different, nil
	}
	got, err := fsutil.ReadLimited(path, int64(len(want)), false)
	if err != nil {
		return 0, err
	}
	if bytes.Equal(got, want) {
		return same, nil
	}
	return different, nil
}

// exampleFiles reads the embedded example, with config.toml set up for
// preset and config.toml and tree.json for proj.
func exampleFiles(preset string, proj Project) ([]file, error) {
	var files []file
	err := fs.WalkDir(runner.Example, runner.ExampleDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(runner.Example, p)
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, runner.ExampleDir+"/")
		switch rel {
		case "config.toml":
			if data, err = configForProject(data, preset, proj); err != nil {
				return err
			}
		case "tree.json":
			data = treeFor(proj)
		}
		files = append(files, file{rel: filepath.Join(Dir, filepath.FromSlash(rel)), data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("init: read the embedded example: %w", err)
	}
	return files, nil
}

// ConfigFor rewrites the example config.toml for preset: the active
// `preset = ...` line of [executor] names it; for codex and claude the
// active `args = ...` line holds config.DefaultArgs(preset); for command
// the args line is replaced by a note and the first commented-out
// `# command = [...]` example is made active. "" leaves the example as it
// is. The result is checked with config.Parse.
func ConfigFor(example []byte, preset string) ([]byte, error) {
	if preset == "" {
		return example, nil
	}
	switch preset {
	case config.PresetCodex, config.PresetClaude, config.PresetCommand:
	default:
		return nil, fmt.Errorf("init: unknown preset %q: want codex, claude or command", preset)
	}
	lines := strings.SplitAfter(string(example), "\n")
	table := ""
	var didPreset, didArgs, didCommand bool
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "[") {
			table = strings.Trim(trimmed, "[] \t")
			continue
		}
		if table != "executor" {
			continue
		}
		eol := line[len(strings.TrimRight(line, "\r\n")):]
		switch {
		case !didPreset && assigns(trimmed, "preset"):
			lines[i] = "preset = " + strconv.Quote(preset) + eol
			didPreset = true
		case !didArgs && assigns(trimmed, "args"):
			if preset == config.PresetCommand {
				lines[i] = `# args: not used with preset = "command"; command holds every argument.` + eol
			} else {
				lines[i] = "args = " + tomlStrings(config.DefaultArgs(preset)) + eol
			}
			didArgs = true
		case !didCommand && preset == config.PresetCommand && strings.HasPrefix(trimmed, "#"):
			rest := strings.TrimSpace(strings.TrimPrefix(trimmed, "#"))
			if assigns(rest, "command") {
				lines[i] = rest + eol
				didCommand = true
			}
		}
	}
	if !didPreset || !didArgs || (preset == config.PresetCommand && !didCommand) {
		return nil, errors.New("init: the embedded example config.toml lacks the [executor] preset, args or commented command line")
	}
	out := []byte(strings.Join(lines, ""))
	cfg, err := config.Parse(path.Join(runner.ExampleDir, "config.toml"), out)
	if err != nil {
		return nil, fmt.Errorf("init: the example config.toml for preset %q does not load: %w", preset, err)
	}
	if cfg.Executor.Preset != preset {
		return nil, fmt.Errorf("init: the example config.toml for preset %q sets preset %q", preset, cfg.Executor.Preset)
	}
	return out, nil
}

// assigns reports whether a trimmed line assigns key (`key = ...`).
func assigns(trimmed, key string) bool {
	rest, ok := strings.CutPrefix(trimmed, key)
	return ok && strings.HasPrefix(strings.TrimLeft(rest, " \t"), "=")
}

// tomlStrings writes a TOML array of basic strings. strconv.Quote's
// escapes are valid TOML for the printable ASCII arguments presets use.
func tomlStrings(a []string) string {
	q := make([]string, len(a))
	for i, s := range a {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

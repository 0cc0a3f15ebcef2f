package executor

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Executor presets.
const (
	PresetCodex   = "codex"
	PresetClaude  = "claude"
	PresetCommand = "command"
)

// Placeholders are the values substituted for {prompt_file},
// {output_file}, {schema_file}, {iteration} and {node} in argv.
type Placeholders struct {
	PromptFile, OutputFile, SchemaFile string
	Iteration                          int
	Node                               string
}

func (ph Placeholders) replacer() *strings.Replacer {
	return strings.NewReplacer(
		"{prompt_file}", ph.PromptFile,
		"{output_file}", ph.OutputFile,
		"{schema_file}", ph.SchemaFile,
		"{iteration}", strconv.Itoa(ph.Iteration),
		"{node}", ph.Node,
	)
}

// BuildArgv returns the command line of an executor:
//
//	codex:   <bin|codex> exec --json --skip-git-repo-check
//	         --output-last-message {output_file} --output-schema {schema_file} <args...> -
//	claude:  <bin|claude> -p --output-format stream-json --verbose <args...>
//	command: <command...>
//
// The prompt goes to stdin in every case. Placeholders are substituted in
// every argument of command and in the preset's args (other text in braces
// is left alone, so JSON arguments pass through).
func BuildArgv(o Options, ph Placeholders) ([]string, error) {
	r := ph.replacer()
	sub := func(in []string) []string {
		out := make([]string, len(in))
		for i, a := range in {
			out[i] = r.Replace(a)
		}
		return out
	}
	bin := o.Bin
	switch o.Preset {
	case PresetCodex:
		if bin == "" {
			bin = "codex"
		}
		argv := []string{bin, "exec", "--json", "--skip-git-repo-check",
			"--output-last-message", ph.OutputFile, "--output-schema", ph.SchemaFile}
		args := sub(o.Args)
		if o.Confined {
			args = CodexInRoom(args)
		}
		argv = append(argv, args...)
		return append(argv, "-"), nil
	case PresetClaude:
		if bin == "" {
			bin = "claude"
		}
		argv := []string{bin, "-p", "--output-format", "stream-json", "--verbose"}
		return append(argv, sub(o.Args)...), nil
	case PresetCommand:
		if len(o.Command) == 0 || o.Command[0] == "" {
			return nil, errors.New(`executor.command is empty: preset "command" needs the program and its arguments`)
		}
		return sub(o.Command), nil
	case "":
		return nil, errors.New(`executor.preset is not set: want "codex", "claude" or "command"`)
	default:
		return nil, fmt.Errorf(`executor.preset %q is unknown: want "codex", "claude" or "command"`, o.Preset)
	}
}

// npmPackage names the package that installs a preset's program.
var npmPackage = map[string]string{
	PresetCodex:  "@openai/codex",
	PresetClaude: "@anthropic-ai/claude-code",
}

// CheckProgram reports whether the program the executor o runs can be
// found (for a bare name, in $PATH; a relative path, from root), with the
// fix when it cannot: what `runner validate` says before a run would fail
// on it.
func CheckProgram(o Options, root string) error {
	argv, err := BuildArgv(o, Placeholders{})
	if err != nil {
		return err
	}
	return checkExecutable(o.Preset, argv[0], root)
}

// checkExecutable makes sure the program of argv exists before anything
// runs: a bare name is looked up in $PATH, a relative path is taken from
// the repository root (the agent's working directory).
func checkExecutable(preset, program, root string) error {
	path := program
	if strings.ContainsRune(program, filepath.Separator) && !filepath.IsAbs(program) {
		path = filepath.Join(root, program)
	}
	_, err := exec.LookPath(path)
	if err == nil {
		return nil
	}
	if !strings.ContainsRune(program, filepath.Separator) {
		if pkg, ok := npmPackage[preset]; ok {
			return fmt.Errorf("%s: executable not found in $PATH; install it with npm install -g %s or set executor.bin", program, pkg)
		}
		return fmt.Errorf("%s: executable not found in $PATH; check executor.command", program)
	}
	key := "executor.command"
	if preset != PresetCommand {
		key = "executor.bin"
	}
	return fmt.Errorf("%s: %s is not an executable file: %w", program, key, errors.Unwrap(err))
}

// CodexInRoom rewrites codex's own --sandbox (-s) to danger-full-access
// for a run confined by the runner (SPEC §19): codex's read-only and
// workspace-write sandboxes start bubblewrap, which needs to make mount
// namespaces, and Landlock refuses that, so every command codex runs
// would fail while codex still says done. The runner's room confines it
// instead, more narrowly (its worktree, not the whole /tmp).
func CodexInRoom(args []string) []string {
	out := slices.Clone(args)
	for i := 0; i < len(out); i++ {
		a := out[i]
		switch {
		case (a == "--sandbox" || a == "-s") && i+1 < len(out):
			out[i+1] = "danger-full-access"
			i++
		case strings.HasPrefix(a, "--sandbox="):
			out[i] = "--sandbox=danger-full-access"
		}
	}
	return out
}

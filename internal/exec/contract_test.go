package executor

import (
	"context"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/config"
)

// presetContract lists, per preset, the help command of the real CLI and
// the arguments the runner passes or recommends: the preset's own flags
// (BuildArgv with config.DefaultArgs) plus the alternatives the example
// config.toml suggests. Values ("stream-json", "workspace-write") must
// appear in the help too.
var presetContract = map[string]struct {
	help  []string
	extra []string
}{
	PresetCodex:  {[]string{"exec", "--help"}, []string{"--sandbox", "danger-full-access", "read-only", "--dangerously-bypass-approvals-and-sandbox", "--ephemeral", "--color", "-m", "-c"}},
	PresetClaude: {[]string{"--help"}, []string{"--dangerously-skip-permissions", "--model", "--max-budget-usd", "--append-system-prompt"}},
}

// TestPresetFlagsAgainstRealCLI checks, when the real codex or claude is
// on $PATH, that every flag and value a preset uses appears in its --help.
// It is skipped otherwise: CI does not need the real CLIs.
func TestPresetFlagsAgainstRealCLI(t *testing.T) {
	for _, preset := range []string{PresetCodex, PresetClaude} {
		t.Run(preset, func(t *testing.T) {
			path, err := exec.LookPath(preset)
			if err != nil {
				t.Skipf("%s is not on $PATH", preset)
			}
			c := presetContract[preset]
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			help, err := exec.CommandContext(ctx, path, c.help...).CombinedOutput()
			if err != nil {
				t.Fatalf("%s %s: %v\n%s", path, strings.Join(c.help, " "), err, help)
			}
			version, _ := exec.CommandContext(ctx, path, "--version").CombinedOutput()
			t.Logf("%s: %s", path, strings.TrimSpace(string(version)))

			argv, err := BuildArgv(Options{Preset: preset, Args: config.DefaultArgs(preset)},
				Placeholders{OutputFile: "/out", SchemaFile: "/schema"})
			if err != nil {
				t.Fatal(err)
			}
			var words []string
			for _, a := range append(argv[1:], c.extra...) {
				switch {
				case a == "-" || a == "exec" || strings.HasPrefix(a, "/"):
					// the prompt from stdin, the subcommand (its help is
					// the one read), placeholder paths
				default:
					words = append(words, a)
				}
			}
			for _, w := range words {
				re := regexp.MustCompile(`(^|[\s,"'(\[])` + regexp.QuoteMeta(w) + `($|[\s,"'=)\]<.])`)
				if !re.Match(help) {
					t.Errorf("%q (used by the %s preset or its documented alternatives) is not in `%s %s`", w, preset, preset, strings.Join(c.help, " "))
				}
			}
		})
	}
}

package config

import (
	"errors"
	"strings"
	"testing"

	runner "github.com/runner-cli/runner"
)

// FuzzParse checks that Parse never panics, that a config it accepts also
// passes Validate, and that every rejection is an *Error whose problems
// name the file.
func FuzzParse(f *testing.F) {
	example, err := runner.Example.ReadFile(runner.ExampleDir + "/config.toml")
	if err != nil {
		f.Fatal(err)
	}
	seeds := []string{
		string(example),
		"",
		"[executor]\npreset = \"command\"\ncommand = [\"a\", \"{prompt_file}\"]\n",
		"[loop]\nmax_iteration = 5\n",
		"[[guard]]\nname = \"t\"\nrun = \"go test ./...\"\ntimeout = \"1m\"\noutput_limit = 100\n",
		"[[scrub.rules]]\nname = \"x\"\nregex = '(a'\n",
		"executor = { env = { \"a.b\" = \"x\" }, args = [\"\"\"\nq\"\"\"] }\n",
		"a.\"b\\u00e9\".c = '''x\n'''\n[[t.u]]\n[t.u.v]\n",
		"[prompt]\nbudget = \"40KiB\"\n[prompt\n",
		"x = [1, [2, {a = 3}], \"]\"]\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		keyLines(string(data)) // must not panic or hang on any text
		cfg, err := Parse(file, data)
		if err == nil {
			if verr := cfg.Validate(); verr != nil {
				t.Fatalf("Parse accepted a config that Validate rejects: %v", verr)
			}
			return
		}
		var ce *Error
		if !errors.As(err, &ce) || len(ce.Problems) == 0 {
			t.Fatalf("Parse error %v (%T) is not an *Error with problems", err, err)
		}
		for _, p := range ce.Problems {
			if p.File != file || !strings.HasPrefix(p.Error(), file+": ") {
				t.Fatalf("problem %q does not name the file", p.Error())
			}
		}
	})
}

// Command genfixtures writes the true-positive and false-positive samples of
// gitleaks' default rules as JSON, for the scrub package's tests.
//
// gitleaks keeps its samples in the rule definitions
// (cmd/generate/config/rules/*.go), as local variables handed to a
// validation helper, and some are produced by helper calls. genfixtures
// therefore runs that rule code: it copies the rules and their helpers from
// the module cache into a temporary module, replaces the validation helper
// by one that records every sample (with the secrets gitleaks itself reports
// for it), seeds the random sample generator so that the output is
// reproducible, and runs it.
//
// Usage, from the repository root (the go command must reach the module
// proxy unless the module is already in the cache):
//
//	go run ./internal/scrub/internal/genfixtures [-version v8.30.1] [-o internal/scrub/testdata/gitleaks/samples.json]
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const modulePath = "github.com/zricethezav/gitleaks/v8"

func main() {
	version := flag.String("version", "v8.30.1", "gitleaks module version")
	out := flag.String("o", "internal/scrub/testdata/gitleaks/samples.json", "output file")
	flag.Parse()
	if err := run(*version, *out); err != nil {
		fmt.Fprintln(os.Stderr, "genfixtures:", err)
		os.Exit(1)
	}
}

func run(version, out string) error {
	out, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "genfixtures-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	gomod := "module genfixtures\n\ngo 1.24\n\nrequire " + modulePath + " " + version + "\n"
	if err := os.WriteFile(filepath.Join(tmp, "go.mod"), []byte(gomod), 0o644); err != nil {
		return err
	}
	dl, err := goCmd(tmp, "mod", "download", "-json", modulePath+"@"+version)
	if err != nil {
		return err
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(dl, &mod); err != nil || mod.Dir == "" {
		return fmt.Errorf("go mod download: no module directory in %s", dl)
	}
	src := filepath.Join(mod.Dir, "cmd", "generate")

	rewrite := strings.NewReplacer(
		`"`+modulePath+`/cmd/generate/config/utils"`, `"genfixtures/utils"`,
		`"`+modulePath+`/cmd/generate/secrets"`, `"genfixtures/secrets"`,
	)
	if err := copyGo(filepath.Join(src, "config", "rules"), filepath.Join(tmp, "rules"), rewrite, nil); err != nil {
		return err
	}
	// The sample generators and patterns are used as they are; validate.go
	// is replaced by the recorder.
	keep := map[string]bool{"generate.go": true, "patterns.go": true}
	if err := copyGo(filepath.Join(src, "config", "utils"), filepath.Join(tmp, "utils"), rewrite, keep); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "utils", "record.go"), []byte(recorderSource), 0o644); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(tmp, "secrets"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "secrets", "secrets.go"), []byte(secretsSource), 0o644); err != nil {
		return err
	}

	calls, err := ruleCalls(filepath.Join(src, "config", "main.go"))
	if err != nil {
		return err
	}
	var m strings.Builder
	m.WriteString(mainHead)
	for _, c := range calls {
		fmt.Fprintf(&m, "\trules.%s()\n", c)
	}
	fmt.Fprintf(&m, "\tutils.Write(%q, %q)\n}\n", version, out)
	if err := os.WriteFile(filepath.Join(tmp, "main.go"), []byte(m.String()), 0o644); err != nil {
		return err
	}

	if _, err := goCmd(tmp, "mod", "tidy"); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	cmd := exec.Command("go", "run", ".")
	cmd.Dir = tmp
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("run the recorder: %w", err)
	}
	return nil
}

func goCmd(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, nil
}

// copyGo copies the non-test Go files of dir (only those in keep, when keep
// is not nil) into to, applying rewrite to their text.
func copyGo(dir, to string, rewrite *strings.Replacer, keep map[string]bool) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || keep != nil && !keep[name] {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(to, name), []byte(rewrite.Replace(string(b))), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// ruleCalls returns, in order, the names of the rule constructors that
// gitleaks' config generator calls (rules.X() in its main.go).
func ruleCalls(path string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		return nil, err
	}
	var names []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 0 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "rules" {
			names = append(names, sel.Sel.Name)
		}
		return true
	})
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: no rules.X() calls found", path)
	}
	return names, nil
}

const mainHead = `package main

import (
	"genfixtures/rules"
	"genfixtures/utils"
)

func main() {
`

// secretsSource replaces gitleaks' sample generator with one seeded from a
// counter, so that every run produces the same samples.
const secretsSource = `package secrets

import "github.com/lucasjones/reggen"

var seed int64 = 1

func NewSecret(regex string) string {
	g, err := reggen.NewGenerator(regex)
	if err != nil {
		panic(err)
	}
	g.SetSeed(seed)
	seed++
	return g.Generate(1)
}
`

// recorderSource replaces utils.Validate and utils.ValidateWithPaths. For
// each true positive it records the secrets that the rule, run alone as
// gitleaks' own validation runs it, reports; for each false positive it
// records which rules of the whole default configuration report it.
const recorderSource = `package utils

import (
	"encoding/json"
	"os"
	"slices"
	"strings"

	"github.com/zricethezav/gitleaks/v8/cmd/generate/config/base"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
)

type Sample struct {
	Text    string   ` + "`json:\"text\"`" + `
	Path    string   ` + "`json:\"path,omitempty\"`" + `
	Secrets []string ` + "`json:\"secrets,omitempty\"`" + `
	Flagged []string ` + "`json:\"flagged,omitempty\"`" + `
}

type RuleSamples struct {
	ID  string   ` + "`json:\"id\"`" + `
	TPs []Sample ` + "`json:\"tps\"`" + `
	FPs []Sample ` + "`json:\"fps\"`" + `
}

var recorded []RuleSamples

var full *detect.Detector

func fullDetector() *detect.Detector {
	if full == nil {
		d, err := detect.NewDetectorDefaultConfig()
		if err != nil {
			panic(err)
		}
		full = d
	}
	return full
}

func secretsOf(d *detect.Detector, f detect.Fragment) []string {
	var out []string
	for _, x := range d.Detect(f) {
		if !slices.Contains(out, x.Secret) {
			out = append(out, x.Secret)
		}
	}
	return out
}

func flaggedBy(f detect.Fragment) []string {
	var out []string
	for _, x := range fullDetector().Detect(f) {
		if !slices.Contains(out, x.RuleID) {
			out = append(out, x.RuleID)
		}
	}
	slices.Sort(out)
	return out
}

func sortSamples(s []Sample) {
	slices.SortStableFunc(s, func(a, b Sample) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Text, b.Text)
	})
}

func record(r *config.Rule, tps, fps []detect.Fragment) *config.Rule {
	d := createSingleRuleDetector(r)
	rs := RuleSamples{ID: r.RuleID, TPs: []Sample{}, FPs: []Sample{}}
	for _, f := range tps {
		rs.TPs = append(rs.TPs, Sample{Text: f.Raw, Path: f.FilePath, Secrets: secretsOf(d, f)})
	}
	for _, f := range fps {
		rs.FPs = append(rs.FPs, Sample{Text: f.Raw, Path: f.FilePath, Flagged: flaggedBy(f)})
	}
	sortSamples(rs.TPs)
	sortSamples(rs.FPs)
	recorded = append(recorded, rs)
	return r
}

func fragments(texts []string) []detect.Fragment {
	var out []detect.Fragment
	for _, t := range texts {
		out = append(out, detect.Fragment{Raw: t})
	}
	return out
}

func pathFragments(m map[string]string) []detect.Fragment {
	var out []detect.Fragment
	for p, t := range m {
		out = append(out, detect.Fragment{Raw: t, FilePath: p})
	}
	return out
}

func Validate(rule config.Rule, truePositives []string, falsePositives []string) *config.Rule {
	return record(&rule, fragments(truePositives), fragments(falsePositives))
}

func ValidateWithPaths(rule config.Rule, truePositives map[string]string, falsePositives map[string]string) *config.Rule {
	return record(&rule, pathFragments(truePositives), pathFragments(falsePositives))
}

func createSingleRuleDetector(r *config.Rule) *detect.Detector {
	var (
		uniqueKeywords = make(map[string]struct{})
		keywords       []string
	)
	for _, keyword := range r.Keywords {
		k := strings.ToLower(keyword)
		if _, ok := uniqueKeywords[k]; ok {
			continue
		}
		keywords = append(keywords, k)
		uniqueKeywords[k] = struct{}{}
	}
	r.Keywords = keywords
	cfg := base.CreateGlobalConfig()
	cfg.Rules = map[string]config.Rule{r.RuleID: *r}
	cfg.Keywords = uniqueKeywords
	return detect.NewDetector(cfg)
}

type File struct {
	Gitleaks string        ` + "`json:\"gitleaks\"`" + `
	Rules    []RuleSamples ` + "`json:\"rules\"`" + `
}

func Write(version, path string) {
	b, err := json.MarshalIndent(File{Gitleaks: version, Rules: recorded}, "", "\t")
	if err != nil {
		panic(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		panic(err)
	}
}
`

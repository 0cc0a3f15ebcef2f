package scrub

// The rules of gitleaks (https://github.com/gitleaks/gitleaks, MIT License)
// are imported at build time: genrules reads config/gitleaks.toml from the
// gitleaks module and writes gitleaks_rules.go, which is committed. To move
// to another gitleaks release, change the version below and run
// `go generate ./internal/scrub` (it needs the module proxy, or the module
// in the module cache), then the tests.
//
//go:generate go run ./internal/genrules -version v8.30.1 -o gitleaks_rules.go

// glRule is a gitleaks rule as written in its configuration.
type glRule struct {
	ID          string
	Regex       string
	Path        string // the files gitleaks applies the rule to
	SecretGroup int
	Entropy     float64
	Keywords    []string
	Allowlists  []glAllowlist
}

// glAllowlist is a gitleaks allowlist as written in its configuration.
type glAllowlist struct {
	Condition   string // "AND", or "OR" when empty
	RegexTarget string // "secret" (when empty), "match" or "line"
	Commits     []string
	Paths       []string
	Regexes     []string
	StopWords   []string
	TargetRules []string
}

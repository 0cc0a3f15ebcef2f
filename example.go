// Package runner holds what the runner binary ships besides its code: the
// example .runner/ layout that `runner init` copies into a repository. It
// sits at the module root because go:embed cannot reach parent folders.
package runner

import "embed"

// ExampleDir is the folder inside Example holding the example files.
const ExampleDir = ".runner.example"

// Example is the .runner.example/ folder: config.toml, tree.json and
// .gitignore, read as ExampleDir + "/config.toml" and so on.
//
//go:embed all:.runner.example
var Example embed.FS

package config

import (
	"testing"

	runner "github.com/runner-cli/runner"
)

// BenchmarkParseExample parses the shipped example config.toml: every
// key, most of them commented, as a new project starts with.
func BenchmarkParseExample(b *testing.B) {
	data, err := runner.Example.ReadFile(runner.ExampleDir + "/config.toml")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse(file, data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseProblems parses a file with several problems, which also
// finds the line of each key.
func BenchmarkParseProblems(b *testing.B) {
	data := []byte(`[executor]
preset = "claud"
timeout = 30
output_limit = "8 parsecs"

[loop]
max_iteration = 5
max_attempts = 0

[[guard]]
name = "test"
`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(file, data); err == nil {
			b.Fatal("Parse accepted a bad config")
		}
	}
}

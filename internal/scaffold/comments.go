package scaffold

// The comments Init writes above the guard of each kind: what was
// recognised, what its report gives, and what a suite failing at the
// start of a run means, before that run.

// A regression, in every comment: what a report adds to an exit status.
const perTest = "one result per test, so a failure names its tests and a test that " +
	"passed on the checkpoint and fails now is named as a regression. " +
	"A suite that already fails when a run starts is its baseline: tests failing " +
	"then may keep failing, and the run goes on."

// noReport, in the comment of every guard without a report: what that
// means for a suite that fails when the run starts, said before the run.
const noReport = "Without a report, a suite that already fails when a run starts stops " +
	"that run before any agent works (the preflight: every task would fail it), " +
	"so give it a report before you run, or move the failing tests into the " +
	"tasks' own checks in tree.json."

// guardComments are the comments written above the guard's run line, per
// variant, without their "# ": prose is wrapped (see wrap), lines that
// begin with two spaces are kept as they are.
var guardComments = map[string]string{
	KindGo: `Recognised a Go module (go.mod). go test -json prints one JSON event
per test on stdout, which report = "go-json" reads: ` + perTest,

	FlavourPytest: `Recognised a Python project tested with pytest. --junitxml writes a
JUnit XML report, which report = "junit:PATH" reads: ` + perTest + `
The report goes to ` + ReportDir + `/, outside .runner/ (which the agent
may not write to): keep build/ in the repository's .gitignore so that
no report is committed with a task. In a virtualenv, name its interpreter
(".venv/bin/python -m pytest ...") or the tool that runs it
("uv run pytest ...", "poetry run pytest ...").`,

	FlavourUnittest: `Recognised a Python project tested with unittest (nothing mentions
pytest). -v prints one line per test, which report = "unittest" reads
(the runner reads both stdout and stderr, where unittest prints): ` + perTest + `
Nothing to install. In a virtualenv, name its interpreter
(".venv/bin/python -m unittest ..."). With pytest installed, its JUnit
report works too:
  run = "python3 -m pytest -q --junitxml=` + ReportDir + `/junit.xml"
  report = "junit:` + ReportDir + `/junit.xml"
(with build/ in the repository's .gitignore).`,

	FlavourNodeTest: `Recognised a Node project whose test script runs node's own test
runner (node --test). --test-reporter=tap prints TAP on stdout, which
report = "tap" reads: ` + perTest + `
The script is run directly: npm test would print its own lines on
stdout among the TAP.`,

	FlavourNPM: `Recognised a Node project (package.json has a test script). npm test
prints what the test runner prints, no report a guard can read: the
exit status alone judges, and a failure cannot name its tests. ` + noReport + `
A report makes regressions nameable per test, for example with node's
own runner (node --test):
  run = "node --test --test-reporter=tap"
  report = "tap"
or with jest and jest-junit (npm install --save-dev jest-junit):
  run = "JEST_JUNIT_OUTPUT_DIR=` + ReportDir + ` npx jest --ci --reporters=default --reporters=jest-junit"
  report = "junit:` + ReportDir + `/junit.xml"
(vitest: --reporter=junit with --outputFile), with build/ in the
repository's .gitignore so that no report is committed with a task.`,

	KindRust: `Recognised a Rust project (Cargo.toml). cargo test prints no report a
guard can read: the exit status alone judges, and a failure cannot name
its tests. ` + noReport + `
cargo-nextest writes JUnit XML, which makes regressions nameable per
test: with
  [profile.ci.junit]
  path = "junit.xml"
in .config/nextest.toml, write
  run = "cargo nextest run --profile ci"
  report = "junit:target/nextest/ci/junit.xml"`,

	KindMake: `Recognised a Makefile with a test target. make test prints what its
commands print, no report a guard can read: the exit status alone
judges, and a failure cannot name its tests. ` + noReport + `
If the target runs a tool that can write one (go test -json, pytest
--junitxml, python3 -m unittest -v, node --test --test-reporter=tap,
cargo nextest), run that tool here instead, with report = "go-json",
"junit:PATH", "unittest" or "tap".`,
}

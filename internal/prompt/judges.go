package prompt

import "fmt"

// Judge is one command that judges the selected node's work.
type Judge struct {
	Check bool   // a check of Node; otherwise a global guard
	Node  string // the node carrying a check
	Name  string
	Run   string
	// ByRegression says a guard is judged by its report's tests against
	// the baseline: its tests that already fail may keep failing; every
	// other test must pass and still run, every package still build.
	ByRegression bool
}

// judgeLines says, one line each, what will judge the work.
func judgeLines(judges []Judge, id string) []string {
	var lines []string
	for _, j := range judges {
		var why string
		switch {
		case j.Check && j.Node == id:
			why = "this task's check, must pass"
		case j.Check:
			why = fmt.Sprintf("check of %s, whose last open task this is: must pass", j.Node)
		case j.ByRegression:
			why = "guard, by test: every test that passes now must still run and pass, new tests must pass, every package must still build; tests failing now may keep failing"
		default:
			why = "guard, must pass"
		}
		lines = append(lines, fmt.Sprintf("%s: `%s` (%s)", j.Name, j.Run, why))
	}
	return lines
}

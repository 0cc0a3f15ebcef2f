package loop

import (
	"context"
	"os"
	"reflect"
	"strconv"
	"testing"

	"github.com/runner-cli/runner/internal/state"
)

// TestRunKeepsRuns runs the loop with loop.keep_runs = 2: the state, the
// journal and the last run folders survive, older folders do not.
func TestRunKeepsRuns(t *testing.T) {
	p := stateRepo(t)
	write(t, p.Config(), `[executor]
preset = "command"
command = ["sh", "-c", "cat > /dev/null; echo '{\"status\": \"retry\", \"summary\": \"again\"}'"]

[loop]
max_attempts = 100
keep_runs = 2
`)
	write(t, p.Tree(), testTree)
	res, err := Run(context.Background(), Options{Paths: p, MaxIterations: 5})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason != MaxIterations || res.Iterations != 5 {
		t.Fatalf("run ended with %+v", res)
	}
	if got, want := runFolders(t, p), []int{4, 5}; !reflect.DeepEqual(got, want) {
		t.Errorf("folders left %v, want %v", got, want)
	}
	rs, err := state.LoadRunState(p.RunState())
	if err != nil || rs.Iteration != 5 || rs.InFlight != nil {
		t.Fatalf("run state %+v, %v", rs, err)
	}
	recs, err := state.ReadJournal(p.Journal())
	if err != nil {
		t.Fatal(err)
	}
	recorded := 0
	for _, rec := range recs {
		if rec.Event == state.EventRecorded {
			recorded++
		}
	}
	if recorded != 5 {
		t.Errorf("journal holds %d recorded records, want 5", recorded)
	}
	// The next run starts from the kept folders and goes on numbering.
	if _, err := Run(context.Background(), Options{Paths: p, MaxIterations: 1}); err != nil {
		t.Fatal(err)
	}
	if got, want := runFolders(t, p), []int{5, 6}; !reflect.DeepEqual(got, want) {
		t.Errorf("after one more run: folders left %v, want %v", got, want)
	}
}

func runFolders(t *testing.T, p state.Paths) []int {
	t.Helper()
	entries, err := os.ReadDir(p.RunsDir())
	if err != nil {
		t.Fatal(err)
	}
	var runs []int
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			runs = append(runs, n)
		}
	}
	return runs
}

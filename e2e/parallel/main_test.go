package parallel

import (
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/runner-cli/runner/e2e"
)

// TestMain lets the test binary play the runner, the fake agent and the
// crash agent (package e2e) in the processes the tests start.
func TestMain(m *testing.M) {
	testscript.Main(m, e2e.Commands())
}

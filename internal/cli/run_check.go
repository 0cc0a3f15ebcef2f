package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/doctor"
	"github.com/runner-cli/runner/internal/state"
)

// checkAgents is `runner run --check`: before anything runs, each
// configured agent is run once with a trivial prompt (as `runner doctor`
// does); when one does not answer, the run does not start.
func checkAgents(ctx context.Context, g *globals, p state.Paths) error {
	cfg, err := config.Load(p.Config())
	if err != nil {
		return err // the run would stop on it too, saying the same
	}
	answers := doctor.AskExecutors(ctx, cfg)
	if err := doctor.WriteAnswers(g.streams.Err, answers); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return &ExitError{Code: ExitInterrupted, Err: errors.New("run --check: interrupted; nothing ran")}
	}
	if !doctor.AllAnswered(answers) {
		var names []string
		for _, a := range answers {
			if !a.OK {
				names = append(names, a.Executor)
			}
		}
		return fmt.Errorf("run --check: %s did not answer (above: what it said, and what to do); no task ran and no attempt was spent", strings.Join(names, ", "))
	}
	return nil
}

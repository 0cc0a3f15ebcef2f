package doctor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/runner-cli/runner/internal/config"
	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/room"
	"github.com/runner-cli/runner/internal/textfmt"
)

// MaxAskTimeout bounds how long an agent is given to answer the check,
// below its own executor.timeout (and executor.idle_timeout) when those
// are longer: a check that waits half an hour helps nobody.
const MaxAskTimeout = 2 * time.Minute

// AskPrompt is the trivial prompt each configured agent gets.
const AskPrompt = "This is a connection check by `runner doctor`: nothing else is asked of you. " +
	"Do not run any command, read or change any file. " +
	`Answer with exactly this JSON object and nothing else: {"status": "done", "summary": "runner check"}` + "\n"

// Answer says whether one configured executor answered the check: its
// agent was run once with AskPrompt and gave a valid final message.
type Answer struct {
	// Executor is its name; UsedBy its table ("executor", "fallback 1",
	// "review").
	Executor string `json:"executor"`
	UsedBy   string `json:"used_by"`
	// OK: it answered with a valid final message, or it is reachable and
	// rate limited now (a run waits that out).
	OK bool `json:"ok"`
	// Class is how its run was classified (executor.Class*); "" when it
	// could not be started.
	Class string `json:"class,omitempty"`
	// Detail is what it said, or why it did not answer; Hint what to do.
	Detail     string `json:"detail,omitempty"`
	Hint       string `json:"hint,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	// Timeout is how long it was given.
	Timeout string `json:"timeout"`
}

// asked is one executor to ask, with its table.
type asked struct {
	usedBy string
	exec   config.Executor
	cfg    *config.Config
}

// toAsk lists the executors a check asks: the agent's chain ([executor],
// each [[fallback]]) and the reviewer. With [engine] the agents run on
// the workers, which have their own credentials: only the reviewer runs
// here.
func toAsk(cfg *config.Config) []asked {
	var out []asked
	if !cfg.Engine.On() {
		out = append(out, asked{"executor", cfg.Executor, cfg})
		for i, f := range cfg.Fallbacks {
			out = append(out, asked{fmt.Sprintf("fallback %d", i+1), f, cfg})
		}
	}
	if cfg.Review.Enabled {
		out = append(out, asked{"review", cfg.Review.Executor, cfg})
	}
	return out
}

// AskExecutors runs each configured executor once, at the same time, with
// AskPrompt, in an empty folder of its own (the repository is not
// touched), confined as a run confines it (room.For: the folder is all
// it may write, the engine key and the person's tool configs are out of
// reach), each within its timeout (at most MaxAskTimeout), and says
// which answered.
func AskExecutors(ctx context.Context, cfg *config.Config) []Answer {
	list := toAsk(cfg)
	out := make([]Answer, len(list))
	var wg sync.WaitGroup
	for i, a := range list {
		wg.Go(func() { out[i] = ask(ctx, a) })
	}
	wg.Wait()
	return out
}

// ask runs one executor with AskPrompt.
func ask(ctx context.Context, a asked) Answer {
	ans := Answer{Executor: a.exec.Label(), UsedBy: a.usedBy}
	o := executor.OptionsFrom(a.exec, executor.CompilePatterns(a.exec.RateLimitPatterns))
	if o.Timeout <= 0 || o.Timeout > MaxAskTimeout {
		o.Timeout = MaxAskTimeout
	}
	if o.IdleTimeout <= 0 || o.IdleTimeout > o.Timeout {
		o.IdleTimeout = o.Timeout
	}
	ans.Timeout = o.Timeout.String()
	dir, err := os.MkdirTemp("", "runner-check-")
	if err != nil {
		ans.Detail = "could not make a folder to ask it in: " + err.Error()
		return ans
	}
	defer os.RemoveAll(dir)
	work, runDir, runnerDir := filepath.Join(dir, "work"), filepath.Join(dir, "run"), filepath.Join(dir, "runner")
	for _, d := range []string{work, runDir, runnerDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			ans.Detail = err.Error()
			return ans
		}
	}
	req := executor.Request{Root: work, RunnerDir: runnerDir, RunDir: runDir, NodeID: "check", Prompt: []byte(AskPrompt),
		PromptFile: filepath.Join(runDir, "prompt.md"), SchemaFile: filepath.Join(runnerDir, "output.schema.json"),
		Confine: room.For(a.cfg, work, dir)}
	err = os.WriteFile(req.PromptFile, req.Prompt, 0o600)
	if err == nil {
		err = os.WriteFile(req.SchemaFile, []byte(executor.OutputSchema), 0o600)
	}
	if err != nil {
		ans.Detail = err.Error()
		return ans
	}
	start := time.Now()
	res, err := executor.Run(ctx, o, req)
	ans.DurationMS = time.Since(start).Milliseconds()
	var se *executor.StartError
	switch {
	case errors.As(err, &se):
		ans.Detail = "cannot be started: " + err.Error()
		return ans
	case err != nil:
		ans.Detail = err.Error()
		return ans
	}
	ans.Class = res.Class
	switch {
	case res.Class == executor.ClassOK && res.Message != nil:
		ans.OK, ans.Detail = true, "answered in "+time.Duration(ans.DurationMS*int64(time.Millisecond)).Round(100*time.Millisecond).String()
	case res.Class == executor.ClassOK:
		ans.Detail = "it ran, but gave no valid final message: " + res.MessageError
		ans.Hint = "check executor.command or executor.args: its final message must be the JSON object the prompt asks for"
	case res.Class == executor.ClassUnavailable:
		ans.Detail = res.Evidence
		ans.Hint = executor.UnavailableHint(executor.UnavailableKind(res), o.Preset)
	case res.Class == executor.ClassRateLimited:
		// Its credentials were taken: a run waits the limit out.
		ans.OK, ans.Detail = true, "reachable, but rate limited now (a run waits such limits out, no attempt spent): "+res.Evidence
	case res.Class == executor.ClassTimeout || res.Class == executor.ClassIdle:
		ans.Detail = fmt.Sprintf("no answer within %s: %s", o.Timeout, res.Error)
		ans.Hint = "check the network and the agent's endpoint; a run would stop it the same way"
	default:
		ans.Detail = res.Error
		if res.Evidence != "" {
			ans.Detail = res.Evidence
		}
	}
	ans.Detail = textfmt.OneLine(ans.Detail, 400)
	return ans
}

// AllAnswered reports whether every executor asked answered.
func AllAnswered(answers []Answer) bool {
	for _, a := range answers {
		if !a.OK {
			return false
		}
	}
	return true
}

// WriteAnswers prints one line per executor asked: whether it answered,
// and if not what it said and what to do.
func WriteAnswers(w io.Writer, answers []Answer) error {
	var b strings.Builder
	for i, a := range answers {
		label := ""
		if i == 0 {
			label = "answers:"
		}
		what := "does NOT answer: " + inert.Line(a.Detail)
		if a.OK {
			what = inert.Line(a.Detail)
		}
		fmt.Fprintf(&b, "%-11s %s (%s): %s\n", label, inert.Line(a.Executor), a.UsedBy, what)
		if a.Hint != "" {
			fmt.Fprintf(&b, "%-11s   to go on: %s\n", "", inert.Line(a.Hint))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// answerLimit bounds an answer: it goes into every later prompt of the
// task.
const answerLimit = 8 << 10

func newAnswerCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "answer NODE TEXT",
		Short: "Answer a blocked task's question and reopen it",
		Long: `Record TEXT as your answer to the question the task NODE (a leaf) is
blocked on, and reopen it: its status becomes open, its attempts 0. The
answer is kept with the task (.runner/state/answers.json) and every later
prompt of the task carries it, with the question, as a person's answer.
The journal records it (event "answered"). TEXT "-" reads the answer from
standard input.

An open task can be answered too (the answer reaches its next prompt); a
done one cannot (reset it first). As with reset, a task in flight is not
answered: wait until its iteration is recorded.

EXIT STATUS
  0  answered
  1  no such task, a task with subtasks, a done task, a task in flight, an
     empty answer, or an error reading or writing the files`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: completeTasks(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAnswer(g, args[0], args[1])
		},
	}
}

func runAnswer(g *globals, id, text string) error {
	if text == "-" {
		data, err := io.ReadAll(io.LimitReader(g.streams.In, answerLimit+1))
		if err != nil {
			return fmt.Errorf("answer: read the answer: %w", err)
		}
		text = string(data)
	}
	text = strings.TrimSpace(text)
	switch {
	case text == "":
		return errors.New("answer: the answer is empty")
	case len(text) > answerLimit:
		return fmt.Errorf("answer: the answer holds more than %d bytes; put the details in a file of the repository and answer with its name", answerLimit)
	}
	p, t, ix, n, err := taskToChange(g, "answer", id)
	if err != nil {
		return err
	}
	switch {
	case !n.IsLeaf():
		return fmt.Errorf("answer: %s has subtasks; answer the one that asks (`runner status` shows which is blocked)", inert.Line(ix.Path(id)))
	case n.EffectiveStatus() == tree.StatusDone:
		return fmt.Errorf("answer: %s is done; `runner reset %s` reopens it first", inert.Line(ix.Path(id)), inert.Line(id))
	}
	if _, err := refuseInFlight("answer", p, ix, id); err != nil {
		return err
	}
	question := ""
	if n.Status == tree.StatusBlocked {
		question = n.BlockedReason
	}
	if err := state.AddAnswer(p, id, state.Answer{Question: question, Answer: text, At: time.Now().UTC()}); err != nil {
		return fmt.Errorf("answer: %w", err)
	}
	blocked := n.Status == tree.StatusBlocked
	if blocked {
		n.Status, n.Attempts, n.BlockedReason = "", 0, ""
		t.Normalize()
	}
	// The journal's record first, as for reset: a runner that sees the
	// reopened task finds what makes the change legitimate.
	if err := state.AppendJournal(p.Journal(), state.Record{Node: id, Event: state.EventAnswered, Summary: text}); err != nil {
		return err
	}
	if blocked {
		if err := tree.Save(p.Tree(), t); err != nil {
			return err
		}
		fmt.Fprintf(g.streams.Out, "answered %s and reopened it (attempts 0); its next prompt carries the answer\n", inert.Line(ix.Path(id)))
		return nil
	}
	fmt.Fprintf(g.streams.Out, "answered %s; its next prompt carries the answer\n", inert.Line(ix.Path(id)))
	return nil
}

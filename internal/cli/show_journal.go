package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// journalTrace is what the journal files still hold about one iteration,
// for `runner show N` once its run folder is gone.
type journalTrace struct {
	Records []state.Record
	Files   []string // the journal files the records came from
	Oldest  int      // the lowest iteration number the journal files hold, 0 if none
}

// traceIteration reads state/journal.1.jsonl and state/journal.jsonl for
// the records of iteration n, line by line. Lines that do not decode are
// skipped: this is a best effort for a person, not a resume.
func traceIteration(p state.Paths, n int) (*journalTrace, error) {
	tr := &journalTrace{}
	key := []byte(`"iteration":` + strconv.Itoa(n))
	for _, path := range []string{p.OldJournal(), p.Journal()} {
		// A FIFO put in the journal's place is refused at once, and a
		// symbolic link is not followed (fsutil.Open).
		f, err := fsutil.Open(path)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", rel(p, path), err)
		}
		found := false
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			// The first record with an iteration is decoded for Oldest
			// (the files are in order); after it, only the lines that may
			// be iteration n's.
			line := sc.Bytes()
			if tr.Oldest != 0 && !bytes.Contains(line, key) {
				continue
			}
			var r state.Record
			if json.Unmarshal(line, &r) != nil || r.Iteration == 0 {
				continue
			}
			if tr.Oldest == 0 {
				tr.Oldest = r.Iteration
			}
			if r.Iteration == n {
				tr.Records = append(tr.Records, r)
				found = true
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", rel(p, path), err)
		}
		if found {
			tr.Files = append(tr.Files, rel(p, path))
		}
	}
	return tr, nil
}

// showMissing answers `runner show N` for an iteration that has no
// meta.json and is not in flight: pruned by loop.keep_runs (what the
// journal holds is printed), or never run.
func showMissing(w io.Writer, p state.Paths, n int, jsonOut bool) error {
	runDir := p.RunDir(n)
	tr, err := traceIteration(p, n)
	if err != nil {
		return err
	}
	keep := 0
	if cfg, err := config.Load(p.Config()); err == nil {
		keep = cfg.Loop.KeepRuns
	}
	_, statErr := os.Stat(runDir)
	folderGone := os.IsNotExist(statErr)
	if len(tr.Records) == 0 {
		last, err := state.LatestRun(p)
		if err != nil {
			return err
		}
		if rs, err := state.LoadRunState(p.RunState()); err == nil {
			last = max(last, rs.Iteration)
		}
		switch {
		case n > last && last == 0:
			return fmt.Errorf("show: there is no iteration %d: no iteration has run yet in this repository", n)
		case n > last:
			return fmt.Errorf("show: there is no iteration %d: the last one is %d", n, last)
		case folderGone && tr.Oldest > n:
			return fmt.Errorf("show: iteration %d was pruned%s and its journal records rotated out (the journal starts at iteration %d): nothing of it is left",
				n, keepRunsNote(keep), tr.Oldest)
		case folderGone:
			return fmt.Errorf("show: there is no iteration %d: neither a run folder nor a journal record", n)
		}
		return fmt.Errorf("show: iteration %d has no record (%s missing, and the journal has nothing on it)", n, rel(p, state.MetaFile(runDir)))
	}
	why := fmt.Sprintf("its run folder %s is gone", rel(p, runDir))
	if !folderGone {
		why = fmt.Sprintf("its %s is missing", rel(p, state.MetaFile(runDir)))
	} else if keep > 0 {
		why = fmt.Sprintf("pruned by loop.keep_runs = %d (only the last %s are kept)", keep, plural(keep, "run folder"))
	}
	if jsonOut {
		return fmt.Errorf("show: iteration %d has no meta.json to print: %s; `runner show %d` prints what the journal holds", n, why, n)
	}
	node := tr.Records[0].Node
	if t, err := tree.Load(p.Tree()); err == nil {
		if ix := tree.NewIndex(t); ix.Node(node) != nil {
			node = ix.Path(node)
		}
	}
	printTrace(w, n, node, why, tr)
	return nil
}

func keepRunsNote(keep int) string {
	if keep > 0 {
		return fmt.Sprintf(" (loop.keep_runs = %d)", keep)
	}
	return ""
}

// printTrace prints an iteration's journal records (node is the path of
// the node they name): each event, then the outcome and summary of the
// last record that has them.
func printTrace(w io.Writer, n int, node, why string, tr *journalTrace) {
	fmt.Fprintf(w, "iteration %d — %s: %s\n", n, inert.Line(node), why)
	fmt.Fprintf(w, "what %s still holds:\n", joinAnd(tr.Files))
	var end state.Record
	for _, r := range tr.Records {
		fmt.Fprintf(w, "  %s  %-12s%s\n", r.Time.Local().Format("2006-01-02 15:04:05"), inert.Line(r.Event), recordDetail(r))
		if r.Outcome != "" || r.Summary != "" || r.Error != "" {
			end = r
		}
	}
	if end.Outcome != "" {
		fmt.Fprintf(w, "outcome:  %s → task %s, attempts %d\n", inert.Line(end.Outcome), inert.Line(end.NodeStatus), end.Attempts)
	}
	if end.Summary != "" {
		fmt.Fprintf(w, "summary:  %s\n", indentRest(end.Summary))
	}
	if end.Error != "" {
		fmt.Fprintf(w, "error:    %s\n", firstLine(end.Error))
	}
}

// recordDetail is what one journal record says besides its event.
func recordDetail(r state.Record) string {
	var b bytes.Buffer
	add := func(format string, args ...any) {
		b.WriteString(", ")
		fmt.Fprintf(&b, format, args...)
	}
	if r.Event == state.EventStarted {
		add("attempts so far %d", r.Attempts)
	}
	if r.AgentClass != "" {
		add("agent %s", inert.Line(r.AgentClass))
	}
	if r.AgentStatus != "" {
		add("status %s", inert.Line(r.AgentStatus))
	}
	if r.Guard != "" {
		add("guards %s", inert.Line(r.Guard))
	}
	if r.WaitMS > 0 {
		add("waited %s", time.Duration(r.WaitMS)*time.Millisecond)
	}
	if r.Usage != nil {
		add("usage %s", r.Usage)
	}
	if r.Evidence != "" {
		add("evidence: %s", firstLine(r.Evidence))
	}
	if b.Len() == 0 {
		return ""
	}
	return " " + b.String()[2:]
}

func joinAnd(items []string) string {
	switch len(items) {
	case 0:
		return "the journal"
	case 1:
		return items[0]
	}
	return items[0] + " and " + items[1]
}

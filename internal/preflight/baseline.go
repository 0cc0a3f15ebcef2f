package preflight

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/strictjson"
)

// The baseline (SPEC §18): the preflight records what the guards find on
// the untouched checkpoint (state/baselines/), each task's guards are
// judged against the baseline of the checkpoint it started from, and
// what they found on a task that lands is the baseline of its commit.

// foundFile is the file of a run folder (or its integration folder)
// holding what the guards found there: the next baseline, should the
// task land.
const foundFile = "found.json"

// reportModel numbers what a baseline keeps of a report: a baseline
// kept under another model (before broken units, when a Go package was
// a test) is not compared with; the preflight runs again.
const reportModel = 2

// Digest identifies the guard definitions, each field that can change a
// verdict: a preflight that passed stands for these guards only.
func Digest(guards []config.Guard) string {
	h := sha256.New()
	for _, g := range guards {
		fmt.Fprintf(h, "%q %q %d %d", g.Name, g.Run, g.Timeout.Duration, g.OutputLimit)
		if g.Report != "" {
			fmt.Fprintf(h, " %q %d", g.Report, reportModel)
		}
		fmt.Fprintln(h)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Of returns the baseline of key for guards; nil when there is none, or
// it cannot be read (said in the log: the guards are then judged by
// their exit status).
func (b *Baselines) Of(guards []config.Guard, key string) *state.Baseline {
	base, err := state.LoadBaseline(b.p, key, Digest(guards))
	if err != nil {
		b.log.Warn("the guards are judged by their exit status alone", "err", err)
		return nil
	}
	return base
}

// SaveFound keeps what the guards found in dir, for the baseline of the
// task's commit once it lands.
func SaveFound(dir string, found []state.BaselineGuard) error {
	return fsutil.ReplaceJSON(filepath.Join(dir, foundFile), found, fsutil.NotSynced)
}

// Follow makes what the guards found on a task that landed (in dir: the
// run folder, or its integration folder when the guards ran on the
// integrated result) the baseline of its commit, and the run state's
// preflight, when the guards judged the task against the baseline of
// parent with the same guards. inUse are the checkpoints the run's
// working trees are at, whose baselines are kept.
func (b *Baselines) Follow(cfg *config.Config, meta *state.Meta, parent, commit, dir string, inUse []string) {
	c := b.ledger.Preflight()
	digest := Digest(cfg.Guards)
	if parent == commit || meta.Guard != state.GuardPass || len(cfg.Guards) == 0 {
		return
	}
	var found []state.BaselineGuard
	data, err := fsutil.ReadLimited(filepath.Join(dir, foundFile), 256<<20, true)
	if err == nil {
		err = strictjson.Decode(data, &found, 8)
	}
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			b.log.Warn("what the guards found on the task is not the next baseline", "iteration", meta.Iteration, "err", err)
		}
		return
	}
	base := &state.Baseline{Key: commit, Guards: digest, At: time.Now().UTC(), From: fmt.Sprintf("iteration %d", meta.Iteration), Results: found}
	if err := state.SaveBaseline(b.p, base); err != nil {
		b.log.Warn("could not keep the baseline of the task's commit; the next run's preflight finds it", "commit", short(commit), "err", err)
		return
	}
	if c != nil && c.Commit == parent && c.Guards == digest {
		next := *c
		next.Commit = commit
		b.ledger.SetPreflight(&next)
	}
	if c != nil {
		inUse = append(inUse, c.Commit)
	}
	state.PruneBaselines(b.p, 2*cfg.Loop.Parallel+4, append(inUse, commit, parent)...)
}

package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/lazyregexp"
	"github.com/runner-cli/runner/internal/strictjson"
)

// A baseline (SPEC §18) is what the guards found on one checkpoint: for
// each guard whether it passed and, for a guard with a test report, which
// tests passed and which failed. A task is judged against the baseline of
// the checkpoint it started from: a test that passed there and fails now
// is a regression; a test that already failed may keep failing.
//
// Baselines live in state/baselines/<key>.json, key the checkpoint's
// commit (or "worktree" without git checkpoints): with parallel slots,
// tasks that started from different checkpoints are judged at once.

// Baseline is what the guards found on one checkpoint.
type Baseline struct {
	// Key is the checkpoint's commit, or WorktreeBaseline.
	Key string `json:"key"`
	// Guards is the digest of the guard definitions it was found with: a
	// baseline judges only with the same guards.
	Guards string    `json:"guards"`
	At     time.Time `json:"at"`
	// From says where it was found: "preflight" or "iteration N".
	From    string          `json:"from"`
	Results []BaselineGuard `json:"results"`
}

// WorktreeBaseline is the key of the baseline without git checkpoints.
const WorktreeBaseline = "worktree"

// BaselineGuard is one guard on the baseline's checkpoint.
type BaselineGuard struct {
	Name   string `json:"name"`
	Passed bool   `json:"passed"`
	// Report is the guard's report format; ReportError why it could not
	// be read ("" when it was, or there is none).
	Report      string `json:"report,omitempty"`
	ReportError string `json:"report_error,omitempty"`
	// Passing and Failing are the tests of a report that was read,
	// sorted; Skipped counts the rest. Broken are the report's units
	// whose tests could not run (a package that does not build, a module
	// that could not be collected), sorted.
	Passing []string     `json:"passing,omitempty"`
	Failing []string     `json:"failing,omitempty"`
	Skipped int          `json:"skipped,omitempty"`
	Broken  []BrokenUnit `json:"broken,omitempty"`
}

// BrokenUnit is a unit of a report whose tests could not run, and how.
type BrokenUnit struct {
	Unit   string `json:"unit"`
	Reason string `json:"reason,omitempty"`
}

// String is "unit: reason".
func (b BrokenUnit) String() string {
	if b.Reason == "" {
		return b.Unit
	}
	return b.Unit + ": " + b.Reason
}

// BrokenNames are the units as people read them ("unit: reason").
func (g *BaselineGuard) BrokenNames() []string {
	names := make([]string, len(g.Broken))
	for i, b := range g.Broken {
		names[i] = b.String()
	}
	return names
}

// HasReport reports whether the guard's tests are known.
func (g *BaselineGuard) HasReport() bool {
	return g.Report != "" && g.ReportError == ""
}

// PassedTest reports whether test passed on the baseline.
func (g *BaselineGuard) PassedTest(test string) bool {
	_, ok := slices.BinarySearch(g.Passing, test)
	return ok
}

// FailedTest reports whether test failed on the baseline.
func (g *BaselineGuard) FailedTest(test string) bool {
	_, ok := slices.BinarySearch(g.Failing, test)
	return ok
}

// BrokenUnit reports whether unit was broken on the baseline.
func (g *BaselineGuard) BrokenUnit(unit string) bool {
	_, ok := slices.BinarySearchFunc(g.Broken, unit, func(b BrokenUnit, u string) int { return strings.Compare(b.Unit, u) })
	return ok
}

// Guard returns the baseline of the guard named name, nil when it has
// none.
func (b *Baseline) Guard(name string) *BaselineGuard {
	if b == nil {
		return nil
	}
	for i := range b.Results {
		if b.Results[i].Name == name {
			return &b.Results[i]
		}
	}
	return nil
}

// Sort puts each guard's test lists in the order PassedTest needs.
func (b *Baseline) Sort() {
	for i := range b.Results {
		sort.Strings(b.Results[i].Passing)
		sort.Strings(b.Results[i].Failing)
		slices.SortFunc(b.Results[i].Broken, func(x, y BrokenUnit) int { return strings.Compare(x.Unit, y.Unit) })
	}
}

// BaselinesDir is .runner/state/baselines/.
func (p Paths) BaselinesDir() string { return p.join("state", "baselines") }

// BaselineFile is the file of the baseline keyed key.
func (p Paths) BaselineFile(key string) string {
	return filepath.Join(p.BaselinesDir(), key+".json")
}

// maxBaselineFile bounds a baseline's file: a million tests' names.
const maxBaselineFile = 256 << 20

var baselineKey = lazyregexp.New(`^(worktree|[0-9a-f]{7,64})$`)

// SaveBaseline writes b durably under its key.
func SaveBaseline(p Paths, b *Baseline) error {
	if !baselineKey.MatchString(b.Key) {
		return fmt.Errorf("baseline key %q is neither a commit nor %q", b.Key, WorktreeBaseline)
	}
	b.Sort()
	if err := fsutil.MkdirAll(p.BaselinesDir(), 0o755); err != nil {
		return err
	}
	return fsutil.ReplaceJSON(p.BaselineFile(b.Key), b, fsutil.Durable)
}

// LoadBaseline reads the baseline keyed key made with the guards of
// digest ("" for any guards: for showing it, not judging by it); nil,
// nil when there is none (or only one made with other guards).
func LoadBaseline(p Paths, key, digest string) (*Baseline, error) {
	if !baselineKey.MatchString(key) {
		return nil, nil
	}
	var b Baseline
	data, err := fsutil.ReadLimited(p.BaselineFile(key), maxBaselineFile, true)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err == nil {
		err = strictjson.Decode(data, &b, 8)
	}
	if err != nil {
		return nil, fmt.Errorf("read the baseline of %s (%s): %w", key, p.Rel(p.BaselineFile(key)), err)
	}
	if b.Key != key || digest != "" && b.Guards != digest {
		return nil, nil
	}
	b.Sort()
	return &b, nil
}

// PruneBaselines removes all baselines but the newest keep and those
// whose key is in use.
func PruneBaselines(p Paths, keep int, inUse ...string) error {
	entries, err := os.ReadDir(p.BaselinesDir())
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	type file struct {
		name string
		mod  time.Time
	}
	var files []file
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		files = append(files, file{e.Name(), info.ModTime()})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].mod.After(files[j].mod) })
	for i, f := range files {
		key := f.name[:len(f.name)-len(filepath.Ext(f.name))]
		if i < keep || slices.Contains(inUse, key) {
			continue
		}
		if err := fsutil.Remove(filepath.Join(p.BaselinesDir(), f.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

package runbranch

import (
	"path"
	"strings"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/testreport"
)

// maxChangedShown bounds the paths the warning names.
const maxChangedShown = 5

// warnChangedAfterJudged says, once per iteration, that the working tree
// changed after the work was judged, naming what changed; what lands is
// what was judged. The guards' own leftovers are no news: the test
// reports they were asked to write (junit:PATH) and Python's byte-code
// caches are logged at debug level only.
func (b *Branch) warnChangedAfterJudged(cfg *config.Config, meta *state.Meta, changed []string) {
	if _, said := b.warned.LoadOrStore(meta.Iteration, true); said {
		return
	}
	if len(changed) == 0 {
		// Not known (git could not take the tree in time): said as it is.
		b.log.Warn("the working tree changed after the work was judged; what was judged lands", "iteration", meta.Iteration, "node", meta.Node)
		return
	}
	var news []string
	for _, p := range changed {
		if !guardLeftover(cfg, meta, p) {
			news = append(news, p)
		}
	}
	if len(news) == 0 {
		b.log.Debug("the guards left their reports or caches in the working tree; what was judged lands", "iteration", meta.Iteration, "paths", strings.Join(changed, ", "))
		return
	}
	shown := news
	more := ""
	if len(shown) > maxChangedShown {
		shown, more = shown[:maxChangedShown], " and more"
	}
	b.log.Warn("the working tree changed after the work was judged (the guards or checks wrote there); what was judged lands",
		"iteration", meta.Iteration, "node", meta.Node, "changed", strings.Join(shown, ", ")+more)
}

// guardLeftover reports whether p (slash-separated, relative to the
// working tree) is what running the guards leaves by design: a test
// report a guard or check of this iteration names, or a Python byte-code
// cache.
func guardLeftover(cfg *config.Config, meta *state.Meta, p string) bool {
	for _, part := range strings.Split(p, "/") {
		if part == "__pycache__" || part == ".pytest_cache" {
			return true
		}
	}
	if strings.HasSuffix(p, ".pyc") {
		return true
	}
	var reports []string
	for _, g := range cfg.Guards {
		reports = append(reports, g.Report)
	}
	for _, c := range meta.CheckSpecs {
		reports = append(reports, c.Report)
	}
	for _, rep := range reports {
		f, err := testreport.ParseFormat(rep)
		if err != nil || f.Kind != testreport.JUnit {
			continue
		}
		if ok, _ := path.Match(f.Path, p); ok {
			return true
		}
	}
	return false
}

package loop

import (
	"regexp"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/proc"
	"github.com/runner-cli/runner/internal/scrub"
	"github.com/runner-cli/runner/internal/tree"
)

// runCache is what a Runner keeps between iterations to avoid repeating
// work: the last tree.json read or written, the last config.toml read,
// and where the last agent's process ids start.
type runCache struct {
	trees   treeCache
	configs configCache
	prompts prompts // the prompts of the iterations under way (prompts.go)

	// The guards and checks whose test report could not be read, said
	// once a run.
	unreadReports map[string]bool

	// Where process ids stood when the agent of agentIteration started.
	agentIteration int
	agentMark      proc.PIDMark

	// The compiled secret scrubber, with the settings it was built from,
	// and the rate limit patterns of each executor, by their list.
	scrubber    *scrub.Scrubber
	scrubberKey string
	patterns    map[string][]*regexp.Regexp

	// baseLooked: the run looked at its base once (base.go).
	baseLooked bool
}

// treeCache remembers the tree.json the runner last read or wrote, by
// the fileSum of its bytes, and parsed, so that reading the file again
// when it has not changed costs a hash and a Clone instead of a parse.
type treeCache struct {
	sum  fileSum
	tree *tree.Tree // owned by the cache; handed out as clones
	buf  []byte     // reused to read the file
}

// load reads and parses the tree file at path, like tree.Load, and also
// returns the fileSum of what it read (of the file, when it could not be
// read), which a wait compares the file with.
func (c *treeCache) load(path string) (*tree.Tree, fileSum, error) {
	// Parse keeps nothing of the bytes it reads, so one buffer serves
	// every read.
	data, err := fsutil.ReadLimitedInto(c.buf, path, tree.MaxFileSize, true)
	if err != nil {
		return nil, sumFile(path), err
	}
	c.buf = data
	sum := sumBytes(data)
	if c.tree != nil && sum == c.sum {
		return c.tree.Clone(), sum, nil
	}
	t, err := tree.Parse(fsutil.DisplayPath(path), data)
	if err != nil {
		c.tree = nil
		return nil, sum, err
	}
	c.sum, c.tree = sum, t.Clone()
	return t, sum, nil
}

// remember records that the file now holds data, the canonical form of
// t. The cache keeps t itself: the caller must not change it afterwards.
func (c *treeCache) remember(data []byte, t *tree.Tree) {
	c.sum, c.tree = sumBytes(data), t
}

// configCache remembers the config.toml the runner last read, by the
// fileSum of its bytes, so that an unchanged file is not parsed again.
type configCache struct {
	sum fileSum
	cfg *config.Config // shared: never changed once parsed
}

// load reads and parses the config file at path, like config.Load, and
// also returns the fileSum of what it read.
func (c *configCache) load(path string) (*config.Config, fileSum, error) {
	data, err := fsutil.ReadLimited(path, config.MaxFileSize, true)
	if err != nil {
		_, err = config.Load(path) // its error says what to do about it
		return nil, sumFile(path), err
	}
	sum := sumBytes(data)
	if c.cfg != nil && sum == c.sum {
		return c.cfg, sum, nil
	}
	cfg, err := config.Parse(fsutil.DisplayPath(path), data)
	if err != nil {
		c.cfg = nil
		return nil, sum, err
	}
	c.sum, c.cfg = sum, cfg
	return cfg, sum, nil
}

// task is task id as tree.json has it now, nil when it cannot be read or
// the task is gone.
func (r *Runner) task(id string) *tree.Node {
	t, err := r.loadTree()
	if err != nil {
		return nil
	}
	return t.Find(id)
}

// titleOf is the title of task id as tree.json has it now, "" when it
// cannot be read or the task is gone.
func (r *Runner) titleOf(id string) string {
	if n := r.task(id); n != nil {
		return n.Title
	}
	return ""
}

// reload reads config.toml, strictly (a run's first read).
func (r *Runner) reload() error {
	cfg, err := config.Load(r.p.Config())
	if err != nil {
		return err
	}
	r.cfg = cfg
	return nil
}

// loadTree reads tree.json (through the cache: an unchanged file is not
// parsed again).
func (r *Runner) loadTree() (*tree.Tree, error) {
	t, _, err := r.cache.trees.load(r.p.Tree())
	return t, err
}

package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Git has no switch that turns off the programs a configuration names for
// a path: a clean, smudge or process filter (run by add, status,
// update-index, checkout, read-tree -u, worktree add on every path whose
// attributes say filter=<name>), or a merge driver (run by merge-tree on
// every path whose attributes say merge=<name>, or for all of them with
// merge.default=<name>). Attributes come from .gitattributes files (the
// agent's working tree) and from .git/info/attributes, which takes
// precedence over everything and no option or variable of git's skips
// (GIT_ATTR_SOURCE and --attr-source, git 2.40 and 2.42, only change where
// .gitattributes files are read). So the runner neutralises the drivers
// instead: it asks git for every filter.<name>.*, merge.<name>.* and
// protocol.<name>.allow key of the configuration files it reads, with the
// same git dir, and gives each call command-line values for them, which
// win over every file:
//
//	filter.<name>.clean=  filter.<name>.smudge=  filter.<name>.process=
//	filter.<name>.required=false
//	merge.<name>.driver=exit 1
//	protocol.<name>.allow=never
//
// An empty clean, smudge or process command is no filter (git's convert.c
// runs a command only when it is non-empty; a process set, even empty,
// makes it skip clean and smudge, and the empty ones are there should that
// change), and a filter that is not required lets the content through as
// it is: the blob is the file's bytes, and a checkout writes the blob's
// (with the required one left, git fails: "clean filter 'x' failed"). Any merge.<name>.* key makes a
// driver <name> that shadows git's own of that name, and an empty driver
// command makes merge-tree fail ("cannot run"); `exit 1`, run by the
// shell git runs drivers with, reports the path as conflicted, which is
// what the runner does with a path it cannot merge itself: the task is
// done again on the new head (Integrate, ConflictError).
//
// Textconv and external diff drivers are not overridden (an empty textconv
// command would be run, and fail): the only calls that show a diff's
// content (Diff, DiffStat) pass --no-textconv and --no-ext-diff.
//
// Git reads the configuration anew at every call, and a hostile one may
// change between two calls: the list is asked for again whenever one of
// the files it came from changed (see driverCache).

// mergeDriverOff is the command a neutralised merge driver runs.
const mergeDriverOff = "exit 1"

// driverKeys selects the keys git is asked for: those of the drivers, and
// the includes, whose files are watched as well.
const driverKeys = `^(filter|merge|protocol|include|includeif)\.`

// override is one configuration key set on the command line.
type override struct{ key, value string }

// configEntry is one entry of `git config -z --show-origin --get-regexp`.
type configEntry struct {
	origin string // "file:<path>", "command line:"...
	key    string // the section and variable in lower case, the subsection as written
	value  string
}

// parseConfigList reads `git config -z --show-origin --get-regexp`:
// "<origin> NUL <key> LF <value> NUL" for each entry, "<key> NUL" for a
// key without a value.
func parseConfigList(out []byte) ([]configEntry, error) {
	f := strings.Split(string(out), "\x00")
	if f[len(f)-1] == "" {
		f = f[:len(f)-1]
	}
	if len(f)%2 != 0 {
		return nil, fmt.Errorf("unexpected output of git config: %q", clipQuote(out))
	}
	es := make([]configEntry, 0, len(f)/2)
	for i := 0; i < len(f); i += 2 {
		k, v, _ := strings.Cut(f[i+1], "\n")
		es = append(es, configEntry{origin: f[i], key: k, value: v})
	}
	return es, nil
}

// splitKey splits a configuration key into its section, subsection and
// variable; ok is false for a key without a subsection. A subsection may
// hold dots: it is everything between the first and the last one.
func splitKey(key string) (section, sub, variable string, ok bool) {
	i, j := strings.IndexByte(key, '.'), strings.LastIndexByte(key, '.')
	if i < 0 || j <= i {
		return "", "", "", false
	}
	return key[:i], key[i+1 : j], key[j+1:], true
}

// driverOverrides are the overrides that neutralise every filter and merge
// driver, and every protocol allowed, that entries define. Sorted, each
// once.
func driverOverrides(es []configEntry) []override {
	var filters, merges, protocols []string
	for _, e := range es {
		section, name, variable, ok := splitKey(e.key)
		if !ok {
			continue
		}
		switch section {
		case "filter":
			filters = append(filters, name)
		case "merge":
			merges = append(merges, name)
		case "protocol":
			if variable == "allow" {
				protocols = append(protocols, name)
			}
		}
	}
	var ovs []override
	for _, n := range sortedSet(filters) {
		p := "filter." + n + "."
		ovs = append(ovs, override{p + "clean", ""}, override{p + "smudge", ""}, override{p + "process", ""}, override{p + "required", "false"})
	}
	for _, n := range sortedSet(merges) {
		ovs = append(ovs, override{"merge." + n + ".driver", mergeDriverOff})
	}
	for _, n := range sortedSet(protocols) {
		ovs = append(ovs, override{"protocol." + n + ".allow", "never"})
	}
	return ovs
}

func sortedSet(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

// overrideCall gives ovs to a call: through GIT_CONFIG_COUNT,
// GIT_CONFIG_KEY_<n> and GIT_CONFIG_VALUE_<n> (git 2.31), where a key is
// taken whole, or as -c options with older git. A -c option is cut at its
// first '=', so a name holding one cannot be overridden there: the call is
// refused.
func overrideCall(ovs []override, env bool) (vars, args []string, err error) {
	if len(ovs) == 0 {
		return nil, nil, nil
	}
	if env {
		vars = make([]string, 0, 2*len(ovs)+1)
		vars = append(vars, "GIT_CONFIG_COUNT="+strconv.Itoa(len(ovs)))
		for i, o := range ovs {
			n := strconv.Itoa(i)
			vars = append(vars, "GIT_CONFIG_KEY_"+n+"="+o.key, "GIT_CONFIG_VALUE_"+n+"="+o.value)
		}
		return vars, nil, nil
	}
	args = make([]string, 0, 2*len(ovs))
	for _, o := range ovs {
		if strings.Contains(o.key, "=") {
			return nil, nil, fmt.Errorf("the git configuration names a driver %q that git older than 2.31 cannot be told to leave alone; remove it, or install a newer git", o.key)
		}
		args = append(args, "-c", o.key+"="+o.value)
	}
	return nil, args, nil
}

// driverCache is what a Repo's calls were last given, and the content of
// the files it was read from: the repository's config and config.worktree,
// the global configuration files, the files they include (whatever the
// condition of the include), and HEAD where an include depends on the
// branch. While none of them changes, git would read the same drivers.
type driverCache struct {
	vars, args []string
	files      []string
	content    [][]byte // nil: the file did not exist
	cacheable  bool     // false: an include names a file that cannot be watched
}

// fresh reports whether no watched file changed since the cache was made.
func (c *driverCache) fresh() bool {
	if c == nil || !c.cacheable {
		return false
	}
	for i, f := range c.files {
		if b := readConfigFile(f); !bytes.Equal(b, c.content[i]) || (b == nil) != (c.content[i] == nil) {
			return false
		}
	}
	return true
}

// readConfigFile is the content of a file, nil when it cannot be read
// (git skips a configuration file it cannot read), non-nil otherwise.
func readConfigFile(path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	if b == nil {
		b = []byte{}
	}
	return b
}

// overrides returns the environment variables and the -c options that
// neutralise the drivers of the repository's configuration, for a call
// to add to its own.
func (r *Repo) overrides(ctx context.Context) (vars, args []string, err error) {
	r.driversMu.Lock()
	defer r.driversMu.Unlock()
	if r.drivers.fresh() {
		return r.drivers.vars, r.drivers.args, nil
	}
	watch := r.baseConfigFiles()
	for range 3 {
		content := make([][]byte, len(watch))
		for i, f := range watch {
			content[i] = readConfigFile(f)
		}
		c := call{ok: []int{1}}
		r.locate(&c)
		res, err := r.x.run(ctx, c, "config", "-z", "--show-origin", "--get-regexp", driverKeys)
		if err != nil {
			return nil, nil, fmt.Errorf("read the drivers of the git configuration: %w", err)
		}
		es, err := parseConfigList(res.out)
		if err != nil {
			return nil, nil, err
		}
		vars, args, err := overrideCall(driverOverrides(es), r.x.atLeast(2, 31))
		if err != nil {
			return nil, nil, err
		}
		more, cacheable := r.includedFiles(es)
		d := &driverCache{vars: vars, args: args, files: watch, content: content, cacheable: cacheable}
		if !cacheable {
			r.drivers = d
			return vars, args, nil
		}
		n := len(watch)
		for _, f := range more {
			if !slices.Contains(watch, f) {
				watch = append(watch, f)
			}
		}
		if len(watch) == n {
			// Every file git read was watched from before the call.
			r.drivers = d
			return vars, args, nil
		}
		// Files that were not watched during that call: again, with them.
		r.drivers = nil
	}
	return nil, nil, errors.New("read the drivers of the git configuration: its includes keep changing")
}

// baseConfigFiles are the configuration files git reads for the Repo's
// calls, includes aside: the repository's, the working tree's own, and
// the global ones (the system one is not read).
func (r *Repo) baseConfigFiles() []string {
	files := []string{filepath.Join(r.commonDir, "config"), filepath.Join(r.gitDir, "config.worktree")}
	if g := envValue(r.x.env, "GIT_CONFIG_GLOBAL"); g != "" {
		if !filepath.IsAbs(g) {
			g = filepath.Join(r.top, g)
		}
		return append(files, g)
	}
	home := envValue(r.x.env, "HOME")
	xdg := envValue(r.x.env, "XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	if xdg != "" {
		files = append(files, filepath.Join(xdg, "git", "config"))
	}
	if home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"))
	}
	return files
}

// includedFiles are the files that the entries' include.path and
// includeIf.<condition>.path name, as git resolves them (relative to the
// including file, ~/ in HOME), and HEAD when a condition is on the
// branch; cacheable is false when one cannot be resolved here.
func (r *Repo) includedFiles(es []configEntry) (files []string, cacheable bool) {
	cacheable = true
	for _, e := range es {
		section, cond, variable, ok := splitKey(e.key)
		if e.key == "include.path" {
			section, cond, variable, ok = "include", "", "path", true
		}
		if !ok || variable != "path" || section != "include" && section != "includeif" {
			continue
		}
		if strings.HasPrefix(cond, "onbranch:") {
			files = append(files, filepath.Join(r.gitDir, "HEAD"))
		}
		from, isFile := strings.CutPrefix(e.origin, "file:")
		p := e.value
		switch {
		case !isFile || p == "" || strings.HasPrefix(p, "%(prefix)/") || strings.HasPrefix(p, "~") && !strings.HasPrefix(p, "~/"):
			cacheable = false
			continue
		case strings.HasPrefix(p, "~/"):
			home := envValue(r.x.env, "HOME")
			if home == "" {
				cacheable = false
				continue
			}
			p = filepath.Join(home, p[2:])
		case !filepath.IsAbs(p):
			p = filepath.Join(filepath.Dir(from), p)
		}
		files = append(files, p)
	}
	return files, cacheable
}

// envValue is the value of k in env, "" when it has none; the last one
// wins, as in exec.
func envValue(env []string, k string) string {
	v := ""
	for _, kv := range env {
		if key, val, ok := strings.Cut(kv, "="); ok && key == k {
			v = val
		}
	}
	return v
}
